// Webhook endpoints and a real delivery against the real stack (see generations.test.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";
import { NotFoundError, Videogen, WebhookVerificationError } from "../../dist/index.js";
import { receiver } from "../helpers.mjs";

const client = new Videogen();

test("webhook CRUD, a real delivery verified, a tampered one refused, rotation, test events, the audit trail", async () => {
  const hooks = await receiver();
  try {
    const hook = await client.webhooks.create({ url: hooks.url, events: ["video.completed"] });
    assert.match(hook.secret, /^whsec_/);
    assert.ok((await client.webhooks.list()).some((w) => w.id === hook.id));
    assert.equal((await client.webhooks.get(hook.id)).url, hooks.url);
    const updated = await client.webhooks.update(hook.id, { events: ["video.completed", "video.failed"] });
    assert.deepEqual(updated.events, ["video.completed", "video.failed"]);

    const video = await client.generations.createAndWait(
      { prompt: "a hook's fox", provider: "mock", duration: 3 },
      { timeout: 120_000 },
    );
    const delivery = await hooks.next(
      (d) => d.body.includes(video.id) && d.body.includes('"video.completed"'),
    );
    const event = await client.webhooks.unwrap(delivery.body, delivery.headers, hook.secret);
    assert.equal(event.event, "video.completed");
    assert.equal(event.generation.id, video.id);
    assert.equal(event.generation.status, "completed");

    const tampered = Buffer.from(delivery.body);
    tampered[tampered.indexOf("completed")] ^= 1;
    await assert.rejects(
      client.webhooks.verify(tampered, delivery.headers, hook.secret),
      WebhookVerificationError,
    );

    const logged = [];
    for await (const d of client.webhooks.deliveries(hook.id, { event_type: "video.completed" }))
      logged.push(d);
    const ours = logged.find((d) => d.generation_id === video.id);
    assert.equal(ours.id, delivery.headers["webhook-id"]);
    assert.equal((await client.deliveries.get(ours.id)).webhook_id, hook.id);

    // While a secret rotates, deliveries carry both signatures: each secret verifies them.
    const rotated = await client.webhooks.rotateSecret(hook.id);
    assert.notEqual(rotated.secret, hook.secret);
    const sent = await client.webhooks.sendTest(hook.id);
    const testDelivery = await hooks.next((d) => d.headers["webhook-id"] === sent.id);
    const testEvent = await client.webhooks.unwrap(testDelivery.body, testDelivery.headers, rotated.secret);
    assert.equal(testEvent.event, "webhook.test");
    assert.equal(testEvent.generation, null);
    assert.ok(await client.webhooks.verify(testDelivery.body, testDelivery.headers, hook.secret));

    assert.equal(await client.webhooks.recover(hook.id, { since: new Date(Date.now() - 3_600_000) }), 0);
    await client.webhooks.delete(hook.id);
    await assert.rejects(client.webhooks.get(hook.id), NotFoundError);

    const trail = [];
    for await (const e of client.auditEvents.list({ target_id: hook.id })) trail.push(e);
    assert.deepEqual(trail.map((e) => e.type).sort(), [
      "webhook.created",
      "webhook.deleted",
      "webhook.recovery_requested",
      "webhook.secret_rotated",
      "webhook.updated",
    ]);
    assert.ok(trail.every((e) => e.actor.type === "api_key"));
  } finally {
    await hooks.close();
  }
});
