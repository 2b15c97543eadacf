// verify and unwrap against deliveries signed here with node:crypto, as the notifier signs them.
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { test } from "node:test";
import { Videogen } from "../../dist/index.js";
import { WebhookVerificationError, unwrap, verify } from "../../dist/webhooks.js";
import { generation } from "../helpers.mjs";

const SECRET = `whsec_${randomBytes(24).toString("base64")}`;
const OTHER = `whsec_${randomBytes(24).toString("base64")}`;

function sign(body, { secrets = [SECRET], id = "evt_1", timestamp = Math.floor(Date.now() / 1000) } = {}) {
  const standard = secrets.map((secret) => {
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    return "v1," + createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  });
  const service = secrets.map((secret) => createHmac("sha256", secret).update(body).digest("hex"));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": standard.join(" "),
    "x-service-signature": service.join(" "),
  };
}

const BODY = JSON.stringify({
  event: "video.completed",
  timestamp: "2026-11-24T10:00:00.000Z",
  data: generation({ status: "completed" }),
});

test("a genuine delivery verifies: as text, as bytes, with plain or fetch headers", async () => {
  const headers = sign(BODY);
  assert.equal((await verify(BODY, headers, SECRET)).event, "video.completed");
  assert.equal(
    (await verify(new TextEncoder().encode(BODY), new Headers(headers), SECRET)).event,
    "video.completed",
  );
  const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
  assert.equal((await verify(Buffer.from(BODY), upper, SECRET)).event, "video.completed");
});

test("unwrap gives a typed event: the generation of a video event, none for another", async () => {
  const event = await unwrap(BODY, sign(BODY), SECRET);
  assert.equal(event.event, "video.completed");
  assert.equal(event.generation.id, "gen_1");
  assert.equal(event.generation.status, "completed");
  const test = JSON.stringify({
    event: "webhook.test",
    timestamp: "2026-11-24T10:00:00.000Z",
    data: { webhook_id: "wh_1" },
  });
  assert.equal((await unwrap(test, sign(test), SECRET)).generation, null);
  // an event type this SDK does not know stays a string
  const newer = JSON.stringify({
    event: "video.upscaled",
    timestamp: "2026-11-24T10:00:00.000Z",
    data: generation(),
  });
  assert.equal((await unwrap(newer, sign(newer), SECRET)).event, "video.upscaled");
});

test("a tampered body, another secret, or a changed id is refused", async () => {
  const headers = sign(BODY);
  const tampered = BODY.replace("gen_1", "gen_2");
  await assert.rejects(verify(tampered, headers, SECRET), /no webhook-signature matches/);
  await assert.rejects(verify(BODY, headers, OTHER), WebhookVerificationError);
  await assert.rejects(
    verify(BODY, { ...headers, "webhook-id": "evt_2" }, SECRET),
    /no webhook-signature matches/,
  );
});

test("both signatures must match: a good Standard Webhooks one with a bad service one is refused", async () => {
  const headers = { ...sign(BODY), "x-service-signature": "0".repeat(64) };
  await assert.rejects(verify(BODY, headers, SECRET), /X-Service-Signature/);
});

test("during a rotation either secret verifies a delivery signed with both", async () => {
  const headers = sign(BODY, { secrets: [OTHER, SECRET] });
  assert.ok(await verify(BODY, headers, SECRET));
  assert.ok(await verify(BODY, headers, OTHER));
  const third = `whsec_${randomBytes(24).toString("base64")}`;
  await assert.rejects(verify(BODY, headers, third), WebhookVerificationError);
});

test("a timestamp beyond the tolerance either way is refused; the tolerance can be set", async () => {
  const now = new Date("2026-11-24T10:00:00Z");
  const at = (offset) => sign(BODY, { timestamp: now.getTime() / 1000 + offset });
  assert.ok(await verify(BODY, at(-299), SECRET, { now }));
  await assert.rejects(verify(BODY, at(-301), SECRET, { now }), /s old/);
  await assert.rejects(verify(BODY, at(301), SECRET, { now }), /in the future/);
  assert.ok(await verify(BODY, at(-3000), SECRET, { now, toleranceSeconds: 3600 }));
});

test("missing headers, a bad timestamp, a secret not as issued and a body that is not JSON are refused", async () => {
  const headers = sign(BODY);
  for (const name of Object.keys(headers)) {
    const { [name]: _, ...rest } = headers;
    await assert.rejects(verify(BODY, rest, SECRET), new RegExp(`missing header ${name}`, "i"));
  }
  await assert.rejects(verify(BODY, { ...headers, "webhook-timestamp": "soon" }, SECRET), /not Unix seconds/);
  await assert.rejects(verify(BODY, headers, "whsec_not*base64"), /not a whsec_ secret/);
  const text = "not json";
  await assert.rejects(verify(text, sign(text), SECRET), /not JSON/);
});

test("the client's webhooks.verify and unwrap are the same checks", async () => {
  const client = new Videogen({ apiKey: "vg_test", baseURL: "http://127.0.0.1:9/v1" });
  assert.equal((await client.webhooks.unwrap(BODY, sign(BODY), SECRET)).generation.id, "gen_1");
  await assert.rejects(client.webhooks.verify(BODY, sign(BODY), OTHER), WebhookVerificationError);
});
