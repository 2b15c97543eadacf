// client.batches against the real stack (api, orchestrator and notifier as processes, the real broker and
// store, the mock provider; one generation of the account at a provider at a time), started by
// tests/client/test_typescript_batches.py.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConflictError, ValidationError, Videogen } from "../../dist/index.js";
import { runTag } from "../helpers.mjs";

const client = new Videogen(); // VIDEOGEN_API_KEY, VIDEOGEN_BASE_URL
const WAIT = { pollInterval: 200, timeout: 120_000 };

const item = (n, fields = {}) => ({
  prompt: `a paper crane, take ${n}`,
  provider: "mock",
  duration: 3,
  custom_id: `p${n}`,
  ...fields,
});

test("create → wait with progress → results streamed, items paged and filtered", async () => {
  const refused = await client.batches.create([item(0, { duration: 99 })]).catch((e) => e);
  assert.ok(refused instanceof ValidationError, String(refused));
  assert.equal(refused.problem.invalid_count, 1);
  assert.deepEqual(
    refused.problem.items.map((i) => [i.index, i.custom_id]),
    [[0, "p0"]],
  );

  const tag = runTag();
  const items = [item(0), item(1), item(2, { prompt: "a storm #fail", custom_id: "bad" })];
  const batch = await client.batches.create(items, { metadata: { run: tag }, idempotencyKey: `ts-${tag}` });
  const again = await client.batches.create(items, { metadata: { run: tag }, idempotencyKey: `ts-${tag}` });
  assert.equal(again.id, batch.id);
  assert.equal(batch.counts.total, 3);
  assert.deepEqual(batch.metadata, { run: tag });

  const told = [];
  const done = await client.batches.wait(batch.id, { ...WAIT, onProgress: (b) => told.push(b) });
  assert.equal(done.status, "completed");
  assert.deepEqual([done.counts.completed, done.counts.failed, done.counts.canceled], [2, 1, 0]);
  assert.ok(done.finished_at);
  assert.deepEqual(told.at(-1), done);
  const ended = told.map((b) => b.counts.completed + b.counts.failed + b.counts.canceled);
  assert.deepEqual(
    ended,
    [...ended].sort((a, b) => a - b),
    "the counts only move forward",
  );
  assert.ok(ended[0] < 3, "seen before it finished");

  const results = [];
  for await (const result of client.batches.results(batch.id)) results.push(result);
  assert.deepEqual(
    results.map((r) => [r.custom_id, r.status]),
    [
      ["p0", "completed"],
      ["p1", "completed"],
      ["bad", "failed"],
    ],
  );
  assert.ok(results[0].video_url && results[1].video_url && !results[2].video_url);
  assert.ok(results[2].error.code);
  const lines = [];
  for await (const line of client.batches.resultsLines(batch.id)) lines.push(JSON.parse(line).id);
  assert.deepEqual(
    lines,
    results.map((r) => r.id),
  );

  const failed = [];
  for await (const g of client.batches.generations(batch.id, { status: "failed" })) failed.push(g.custom_id);
  assert.deepEqual(failed, ["bad"]);
  const first = await client.batches.generations(batch.id, { limit: 2 });
  assert.deepEqual(
    first.data.map((g) => g.custom_id),
    ["p0", "p1"],
  );
  assert.ok(first.hasNextPage());
  const paged = [];
  for await (const g of client.batches.generations(batch.id, { limit: 1 })) paged.push(g.custom_id);
  assert.deepEqual(paged, ["p0", "p1", "bad"]);
  const one = await client.batches.generations(batch.id, { custom_id: "p1" });
  assert.deepEqual(
    one.data.map((g) => [g.custom_id, g.batch_id]),
    [["p1", batch.id]],
  );

  assert.equal((await client.batches.retrieve(batch.id)).status, "completed");
  const listed = [];
  for await (const b of client.batches.list({ limit: 1 })) listed.push(b.id);
  assert.ok(listed.includes(batch.id));
  await assert.rejects(client.batches.cancel(batch.id), ConflictError);
});

test("cancel midway: what has not started is canceled, what has is listed, and the wait sees it end", async () => {
  // One generation of the account at a provider at a time: one item starts, the others wait their turn.
  const batch = await client.batches.create(
    [0, 1, 2, 3].map((n) => item(n)),
    { metadata: { run: runTag() } },
  );
  let started = null;
  const until = Date.now() + 60_000;
  while (started === null) {
    assert.ok(Date.now() < until, "no item started within a minute");
    const page = await client.batches.generations(batch.id, { status: "processing" });
    started = page.data.find((g) => g.progress !== null && g.progress !== undefined) ?? null;
    if (started === null) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const answer = await client.batches.cancel(batch.id);
  assert.equal(answer.canceled, 3);
  assert.deepEqual(answer.not_canceled, [started.id]);
  assert.equal(answer.batch.status, "canceling");
  assert.equal(answer.batch.counts.canceled, 3);

  const told = [];
  const done = await client.batches.wait(batch.id, { ...WAIT, onProgress: (b) => told.push(b.status) });
  assert.equal(done.status, "canceled");
  assert.deepEqual([done.counts.completed, done.counts.canceled, done.counts.failed], [1, 3, 0]);
  assert.equal(told.at(-1), "canceled");
  const canceled = [];
  for await (const g of client.batches.generations(batch.id, { status: "failed" }))
    canceled.push(g.error.code);
  assert.deepEqual(canceled, ["canceled", "canceled", "canceled"]);
});
