// The event stream and first frames against the real stack (see generations.test.mjs).
import assert from "node:assert/strict";
import { createReadStream } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Videogen } from "../../dist/index.js";
import { STACK, cuttingProxy } from "../helpers.mjs";

const client = new Videogen();

/** An event id (version:progress) as numbers, to order them. */
function order(id) {
  const [version, progress] = id.split(":");
  return [Number(version), progress === "" ? -1 : Number(progress)];
}

function assertIncreasing(ids) {
  for (let i = 1; i < ids.length; i++) {
    const [a, b] = [order(ids[i - 1]), order(ids[i])];
    assert.ok(b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]), `event ${ids[i]} after ${ids[i - 1]}`);
  }
}

test("the event stream is read to the end, and resumed after a forced disconnect without a gap or a repeat", async () => {
  const proxy = await cuttingProxy(new URL(client.baseURL).host);
  try {
    const viaProxy = new Videogen({ baseURL: proxy.base });
    const made = await client.generations.create({
      prompt: "a fox, followed live",
      provider: "mock",
      duration: 3,
    });
    const seen = [];
    for await (const event of viaProxy.generations.events(made.id)) {
      seen.push(event);
      if (seen.length === 2) proxy.cut(); // mid-generation: the stream breaks under the SDK
    }
    const ids = seen.map((e) => e.id);
    const last = seen.at(-1).generation;
    assert.equal(last.status, "completed");
    assert.equal(new Set(ids).size, ids.length, `repeated: ${ids}`);
    assertIncreasing(ids);
    // Every state the generation entered from the first one seen was seen, in order.
    const statuses = seen.map((e) => e.generation.status).filter((s, i, all) => s !== all[i - 1]);
    const entered = last.timeline.map((step) => step.status);
    assert.deepEqual(statuses, entered.slice(entered.indexOf(statuses[0])));
    const progress = seen
      .filter((e) => e.generation.status === "processing")
      .map((e) => e.generation.progress ?? 0);
    assert.deepEqual(
      progress,
      progress.toSorted((a, b) => a - b),
    );
    // The SDK reconnected, asking for what came after the last event it had.
    const streams = proxy.heads.filter((head) => head.startsWith(`GET /v1/generations/${made.id}/events`));
    assert.ok(streams.length >= 2, `${streams.length} stream requests`);
    assert.match(streams[1], new RegExp(`\r\nlast-event-id: ${ids[1]}\r\n`, "i"));
  } finally {
    await proxy.close();
  }
});

test("an image uploaded from a Node stream is the video's first frame", async () => {
  const upload = await client.uploads.create(createReadStream(STACK.frame), { filename: "frame.png" });
  assert.match(upload.id, /^upl_/);
  assert.equal(upload.content_type, "image/png");
  assert.deepEqual([upload.width, upload.height], [64, 48]);
  const video = await client.generations.createAndWait(
    { prompt: "the same scene, moving", provider: "mock", duration: 3, image: upload.id },
    { timeout: 120_000 },
  );
  assert.equal(video.image.upload_id, upload.id);
  await client.generations.downloadToFile(video.id, join(STACK.output, "frame.mp4")); // its colour: checked by pytest
});
