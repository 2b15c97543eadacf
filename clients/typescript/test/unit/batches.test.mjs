// client.batches against a scripted server on 127.0.0.1: the body and key of a create, a wait's reads,
// interval and deadline, the results file parsed line by line as it streams, and items paged with filters.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { APITimeoutError, BatchWaitTimeoutError, NotFoundError, isBatchFinished } from "../../dist/index.js";
import { clientOf, json, problem, scriptedServer } from "../helpers.mjs";

let api;
beforeEach(async () => {
  api = await scriptedServer();
});
afterEach(async () => {
  await api.close();
});

function batch(status, ended = 0, total = 3) {
  return {
    id: "bat_1",
    object: "batch",
    status,
    counts: { total, queued: 0, processing: total - ended, completed: ended, failed: 0, canceled: 0 },
    refused: [],
    item_events: true,
    metadata: {},
    estimated_cost: null,
    cost: 0,
    created_at: "2026-11-24T10:00:00.000Z",
    finished_at: null,
    error: null,
  };
}

const ITEMS = [
  { prompt: "a fox", provider: "mock", duration: 3, custom_id: "a" },
  { prompt: "a hen", provider: "mock", duration: 3, custom_id: "b" },
];

test("create() sends the items and options as one body, under one idempotency key reused by a retry", async () => {
  api.answers = [
    problem(503, "Unavailable", { headers: { "Retry-After": "0" } }),
    json(batch("in_progress"), 202),
  ];
  const { client } = clientOf(api);
  const made = await client.batches.create(ITEMS, {
    metadata: { job: "n" },
    on_invalid: "skip",
    item_events: false,
  });
  assert.equal(made.id, "bat_1");
  assert.equal(api.requests.length, 2); // a POST is retried only because it carries a key
  const [first, again] = api.requests;
  assert.equal(first.method, "POST");
  assert.equal(first.url, "/v1/batches");
  assert.deepEqual(JSON.parse(first.body), {
    items: ITEMS,
    metadata: { job: "n" },
    on_invalid: "skip",
    item_events: false,
  });
  assert.match(first.headers["idempotency-key"], /^sdk_[0-9a-f]{32}$/);
  assert.equal(again.headers["idempotency-key"], first.headers["idempotency-key"]);

  api.answers = [json(batch("in_progress"), 202)];
  await client.batches.create({ items: ITEMS, metadata: { a: "1" } }, { idempotencyKey: "nightly-7" });
  const third = api.requests.at(-1);
  assert.equal(third.headers["idempotency-key"], "nightly-7");
  assert.deepEqual(JSON.parse(third.body), { items: ITEMS, metadata: { a: "1" } });
});

test("wait() reads every pollInterval ms, tells each read, and resolves to the finished batch", async () => {
  api.answers = [json(batch("in_progress", 0)), json(batch("in_progress", 2)), json(batch("completed", 3))];
  const { client, waits } = clientOf(api);
  const told = [];
  const done = await client.batches.wait("bat_1", {
    pollInterval: 250,
    onProgress: (b) => told.push([b.status, b.counts.completed]),
  });
  assert.equal(done.status, "completed");
  assert.deepEqual(told, [
    ["in_progress", 0],
    ["in_progress", 2],
    ["completed", 3],
  ]);
  assert.deepEqual(waits, [250, 250]); // a fixed interval, as the Python SDK's
  assert.deepEqual(
    api.requests.map((r) => [r.method, r.url]),
    Array(3).fill(["GET", "/v1/batches/bat_1"]),
  );

  // The default interval is 2 s; a failed batch (none of its items written) is finished too.
  api.answers = [
    json(batch("in_progress")),
    json({ ...batch("failed"), error: { code: "batch_not_written", message: "x" } }),
  ];
  api.requests.length = 0;
  const failed = await client.batches.wait("bat_1");
  assert.equal(failed.status, "failed");
  assert.ok(isBatchFinished(failed));
  assert.equal(waits.at(-1), 2000);
});

test("wait() checks its timeout after each read: BatchWaitTimeoutError, an APITimeoutError, with the batch", async () => {
  api.answers = [json(batch("in_progress", 1))];
  const { client, waits } = clientOf(api);
  const told = [];
  const error = await client.batches
    .wait("bat_1", { timeout: 0, onProgress: (b) => told.push(b) })
    .catch((e) => e);
  assert.ok(error instanceof BatchWaitTimeoutError, String(error));
  assert.ok(error instanceof APITimeoutError);
  assert.equal(error.batch.counts.completed, 1);
  assert.equal(told.length, 1); // read once, told, then given up: no pause
  assert.deepEqual(waits, []);

  const controller = new AbortController();
  api.answers = [json(batch("in_progress"))];
  const stopped = client.batches.wait("bat_1", {
    signal: controller.signal,
    onProgress: () => controller.abort(new Error("enough")),
  });
  await assert.rejects(stopped, /enough/);
});

test("results() yields each line's outcome as it arrives, before the file has ended", async () => {
  let finish;
  const finished = new Promise((resolve) => {
    finish = resolve;
  });
  const line = (id, status) =>
    JSON.stringify({
      id,
      custom_id: id.slice(4),
      status,
      video_url: null,
      thumbnail_url: null,
      error: null,
      cost: null,
    });
  api.answers = [
    async (_request, response) => {
      response.writeHead(200, { "Content-Type": "application/jsonl" });
      const second = line("gen_b", "failed");
      // The first line whole and the second cut in two: nothing more until the test has the first.
      response.write(`${line("gen_a", "completed")}\n${second.slice(0, 10)}`);
      await finished;
      response.write(`${second.slice(10)}\r\n\n`);
      response.end(`${line("gen_c", "completed")}`); // the last line without its newline
    },
  ];
  const { client } = clientOf(api);
  const seen = [];
  for await (const result of client.batches.results("bat_1")) {
    seen.push([result.id, result.status]);
    if (seen.length === 1) finish(); // the rest of the file comes only now
  }
  assert.deepEqual(seen, [
    ["gen_a", "completed"],
    ["gen_b", "failed"],
    ["gen_c", "completed"],
  ]);
  assert.equal(api.requests[0].url, "/v1/batches/bat_1/results");

  api.answers = [problem(404, "Not Found")];
  await assert.rejects(async () => {
    for await (const _ of client.batches.resultsLines("bat_9")) assert.fail("no line");
  }, NotFoundError);
});

test("generations() pages the items with the status and custom_id filters", async () => {
  const item = (id) => ({ id, batch_id: "bat_1", custom_id: id, status: "failed" });
  api.answers = [
    json({ data: [item("a")], next_cursor: "c1" }),
    json({ data: [item("b")], next_cursor: null }),
  ];
  const { client } = clientOf(api);
  const page = await client.batches.generations("bat_1", { status: ["failed", "completed"], limit: 1 });
  assert.deepEqual(
    page.data.map((g) => g.id),
    ["a"],
  );
  assert.ok(page.hasNextPage());
  const next = await page.getNextPage();
  assert.deepEqual(
    next.data.map((g) => g.id),
    ["b"],
  );
  const urls = api.requests.map((r) => r.url);
  assert.deepEqual(urls, [
    "/v1/batches/bat_1/generations?status=failed&status=completed&limit=1",
    "/v1/batches/bat_1/generations?status=failed&status=completed&limit=1&cursor=c1",
  ]);

  api.answers = [json({ data: [item("a")], next_cursor: null })];
  const one = [];
  for await (const g of client.batches.generations("bat_1", { custom_id: "a" })) one.push(g.custom_id);
  assert.deepEqual(one, ["a"]);
  assert.equal(api.requests.at(-1).url, "/v1/batches/bat_1/generations?custom_id=a");
});
