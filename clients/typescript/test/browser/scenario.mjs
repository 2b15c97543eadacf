// The SDK in a browser, as it is (no bundler): loaded from /sdk/ on the page's own origin, which also forwards
// /v1/ to the real stack (the API sends no CORS headers: a browser app reaches it through its own origin).
// Run by tests/client/test_typescript.py in headless Chromium; `window.result` is what it found.
import { NotFoundError, Videogen } from "/sdk/index.js";
import { verify } from "/sdk/webhooks.js";

async function signed(body, secret) {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const timestamp = String(Math.floor(Date.now() / 1000));
  const standard = await crypto.subtle.sign("HMAC", key, encoder.encode(`evt_1.${timestamp}.${body}`));
  const serviceKey = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const service = new Uint8Array(await crypto.subtle.sign("HMAC", serviceKey, encoder.encode(body)));
  return new Headers({
    "webhook-id": "evt_1",
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${btoa(String.fromCharCode(...new Uint8Array(standard)))}`,
    "x-service-signature": Array.from(service, (b) => b.toString(16).padStart(2, "0")).join(""),
  });
}

async function run() {
  const key = new URLSearchParams(location.search).get("key");
  const client = new Videogen({ apiKey: key, baseURL: `${location.origin}/v1` });
  const told = [];
  const run = { run: Math.random().toString(36).slice(2) };
  const video = await client.generations.createAndWait(
    { prompt: "a fox, in a browser", provider: "mock", duration: 3, metadata: run },
    { timeout: 120_000, onProgress: (g) => told.push(g.status) },
  );
  const other = await client.generations.create({
    prompt: "another",
    provider: "mock",
    duration: 3,
    metadata: run,
  });
  const listed = [];
  for await (const g of client.generations.list({ metadata: run, limit: 1 })) listed.push(g.id); // two pages
  const missing = await client.generations.get("gen_missing").catch((e) => e);
  const secret = `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24))))}`;
  const body = JSON.stringify({ event: "video.completed", timestamp: new Date().toISOString(), data: video });
  const payload = await verify(body, await signed(body, secret), secret);
  const refused = await verify(
    body.replace("completed", "c0mpleted"),
    await signed(body, secret),
    secret,
  ).catch((e) => e.name);
  return {
    status: video.status,
    told,
    listed: JSON.stringify(listed) === JSON.stringify([other.id, video.id]),
    missing: missing instanceof NotFoundError ? missing.status : String(missing),
    verified: payload.event,
    refused,
  };
}

window.result = run().catch((error) => ({ error: String(error?.stack ?? error) }));
