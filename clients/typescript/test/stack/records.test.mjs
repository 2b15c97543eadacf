// The account's events, as records, against the real stack (see generations.test.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";
import { NotFoundError, Videogen } from "../../dist/index.js";
import { receiver } from "../helpers.mjs";

const client = new Videogen();

test("a completed generation's event is listed and read: what its delivery carried, named by its event_id", async () => {
  const hooks = await receiver();
  const hook = await client.webhooks.create({ url: hooks.url, events: ["video.completed"] });
  try {
    const video = await client.generations.createAndWait(
      { prompt: "a fox on the record", provider: "mock", duration: 3 },
      { timeout: 120_000 },
    );
    // The notifier records an event before it makes its deliveries: once one arrives, the event is there.
    const arrived = await hooks.next((d) => d.body.includes(video.id));
    const delivered = JSON.parse(arrived.body);
    const { event_id } = await client.deliveries.get(arrived.headers["webhook-id"]);

    const event = await client.events.get(event_id);
    assert.equal(event.type, "video.completed");
    assert.deepEqual(event.subject, { type: "generation", id: video.id });
    assert.deepEqual(event.data, delivered.data); // exactly as delivered
    assert.equal(event.data.status, "completed");
    assert.equal(event.created_at, delivered.timestamp);

    const about = [];
    for await (const e of client.events.list({ subject_id: video.id })) about.push(e);
    assert.deepEqual(about, [event]);
    const completed = await client.events.list({
      type: ["video.completed", "video.failed"],
      created_after: new Date(Date.parse(event.created_at) - 1),
      limit: 100,
    });
    assert.ok(completed.data.some((e) => e.id === event.id));
    assert.ok(completed.data.every((e) => ["video.completed", "video.failed"].includes(e.type)));
    const none = await client.events.list({ subject_id: video.id, type: "video.failed" });
    assert.deepEqual(none.data, []);
    await assert.rejects(client.events.get("evt_does_not_exist"), NotFoundError);
  } finally {
    await client.webhooks.delete(hook.id);
    await hooks.close();
  }
});
