// Generations against the real stack (api, orchestrator and notifier as processes, the real broker and
// store, the mock provider), started by tests/client/test_typescript.py.
import assert from "node:assert/strict";
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import {
  AuthenticationError,
  ConflictError,
  GenerationFailedError,
  NotFoundError,
  ValidationError,
  Videogen,
} from "../../dist/index.js";
import { STACK, mp4Seconds, runTag } from "../helpers.mjs";

const client = new Videogen(); // VIDEOGEN_API_KEY, VIDEOGEN_BASE_URL
const WAIT = { timeout: 120_000 };

test("create → wait → completed, and the download is the whole video", async () => {
  const told = [];
  const video = await client.generations.createAndWait(
    { prompt: "a red fox running through snow", provider: "mock", duration: 4 },
    { ...WAIT, onProgress: (g) => told.push(g.status) },
  );
  assert.equal(video.status, "completed");
  assert.ok(video.video_url);
  assert.ok(["queued", "processing"].includes(told[0]), told.join());
  assert.equal(told.at(-1), "completed");
  assert.deepEqual(video.timeline.map((step) => step.status).slice(-2), ["processing", "completed"]);

  const path = join(STACK.output, "fox.mp4"); // decoded by the pytest module afterwards
  const progress = [];
  const written = await client.generations.downloadToFile(video.id, path, {
    onProgress: (done, total) => progress.push([done, total]),
  });
  const file = await readFile(path);
  assert.equal(written, file.length);
  assert.ok(written > 1000);
  assert.deepEqual(progress.at(-1), [written, written]); // the server said how long, and all of it came
  assert.ok(Math.abs(mp4Seconds(file) - 4) < 0.1, `declares ${mp4Seconds(file)} s`);

  const streamed = new Uint8Array(
    await new Response(await client.generations.download(video.id)).arrayBuffer(),
  );
  assert.deepEqual(Buffer.from(streamed), file);
});

test("a generation that fails, and one cancelled, reject a wait with their error", async () => {
  const tag = runTag();
  const failure = await client.generations
    .createAndWait({ prompt: "a storm #fail", provider: "mock", duration: 3, metadata: { run: tag } }, WAIT)
    .catch((e) => e);
  assert.ok(failure instanceof GenerationFailedError, String(failure));
  assert.equal(failure.generation.status, "failed");
  assert.ok(failure.generation.error.code);

  const made = await client.generations.create({
    prompt: "a slow river",
    provider: "mock",
    duration: 3,
    metadata: { run: tag },
  });
  const cancelled = await client.generations.cancel(made.id);
  assert.equal(cancelled.status, "failed");
  assert.equal(cancelled.error.code, "canceled");
  await assert.rejects(client.generations.cancel(made.id), ConflictError); // finished already
  await assert.rejects(client.generations.wait(made.id, WAIT), GenerationFailedError);

  const failed = [];
  for await (const g of client.generations.list({ status: "failed", metadata: { run: tag } }))
    failed.push(g.id);
  assert.deepEqual(failed.sort(), [failure.generation.id, made.id].sort());
  const completed = await client.generations.list({
    status: ["completed", "processing"],
    metadata: { run: tag },
  });
  assert.deepEqual(completed.data, []);
});

test("a three-page walk with filters: newest first, none skipped or repeated", async () => {
  const tag = runTag();
  const made = [];
  for (let n = 0; n < 5; n++) {
    made.push(
      (
        await client.generations.create({
          prompt: `clip ${n}`,
          provider: "mock",
          duration: 3,
          metadata: { run: tag },
        })
      ).id,
    );
  }
  const first = await client.generations.list({ metadata: { run: tag }, provider: "mock", limit: 2 });
  const pages = [];
  for await (const page of first.pages()) pages.push(page.data.map((g) => g.id));
  assert.deepEqual(
    pages.map((p) => p.length),
    [2, 2, 1],
  );
  assert.deepEqual(pages.flat(), made.toReversed());

  const walked = [];
  for await (const g of client.generations.list({ metadata: { run: tag }, limit: 2 })) walked.push(g.id);
  assert.deepEqual(walked, made.toReversed());

  const later = await client.generations.list({
    metadata: { run: tag },
    created_after: new Date(Date.now() + 86_400_000),
  });
  assert.deepEqual(later.data, []);
  const otherRun = await client.generations.list({ metadata: { run: runTag() } });
  assert.deepEqual(otherRun.data, []);
});

test("a deleted generation reads as its tombstone, its link is gone; an upload is read, then deleted", async () => {
  const upload = await client.uploads.create(createReadStream(STACK.frame), { filename: "frame.png" });
  assert.deepEqual(await client.uploads.get(upload.id), upload);
  const made = await client.generations.createAndWait(
    { prompt: "a secret plan", provider: "mock", duration: 3, metadata: { run: runTag() }, image: upload.id },
    WAIT,
  );
  const kept = await client.generations.create({ prompt: "kept", provider: "mock", duration: 3 });

  await client.generations.delete(made.id);
  await client.generations.delete(made.id); // again: not an error
  const tombstone = await client.generations.get(made.id);
  assert.equal(tombstone.deleted, true);
  assert.ok(tombstone.deleted_at);
  assert.deepEqual(
    [tombstone.status, tombstone.prompt, tombstone.metadata, tombstone.image, tombstone.video_url],
    ["completed", "", {}, null, null],
  );
  assert.equal((await fetch(made.video_url)).status, 410);
  const listed = (await client.generations.list({ created_after: made.created_at, limit: 100 })).data;
  assert.ok(listed.some((g) => g.id === kept.id));
  assert.ok(!listed.some((g) => g.id === made.id));

  await client.uploads.delete(upload.id);
  await assert.rejects(client.uploads.get(upload.id), NotFoundError);
  await assert.rejects(client.uploads.delete(upload.id), NotFoundError);
});

test("typed errors: 401, 404 and 422 with its fields", async () => {
  const stranger = new Videogen({ apiKey: "vg_not_a_key" });
  const denied = await stranger.generations.list().catch((e) => e);
  assert.ok(denied instanceof AuthenticationError, String(denied));
  assert.equal(denied.status, 401);

  const missing = await client.generations.get("gen_does_not_exist").catch((e) => e);
  assert.ok(missing instanceof NotFoundError, String(missing));
  assert.match(missing.type, /not-found$/);
  assert.ok(missing.requestId);

  const invalid = await client.generations
    .create({ prompt: "too long", provider: "mock", duration: 30 })
    .catch((e) => e);
  assert.ok(invalid instanceof ValidationError, String(invalid));
  assert.deepEqual(
    invalid.errors.map((e) => e.field),
    ["duration"],
  );
});

test("providers, usage", async () => {
  const providers = await client.providers.list();
  const mock = providers.find((p) => p.id === "mock");
  assert.equal(mock.enabled, true);
  assert.ok(mock.capabilities.durations.length > 0);

  const usage = await client.usage.get({ start: new Date(Date.now() - 86_400_000) });
  assert.ok(usage.total.generations >= 1);
  assert.ok(usage.data.some((row) => row.provider === "mock"));
  assert.equal(usage.api_keys.length, 1); // one key made everything
});
