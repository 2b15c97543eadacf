// Retries, timeouts and typed errors against a scripted server on 127.0.0.1. Waits go through an injected
// sleep that records them, so nothing here sleeps between tries.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { afterEach, beforeEach, test } from "node:test";
import {
  APIConnectionError,
  APIError,
  APIStatusError,
  APITimeoutError,
  AuthenticationError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
  ValidationError,
  VideogenError,
} from "../../dist/index.js";
import { GENERATION, clientOf, json, problem, scriptedServer, silence } from "../helpers.mjs";

let api;
beforeEach(async () => {
  api = await scriptedServer();
});
afterEach(async () => {
  await api.close();
});

const CREATE = { prompt: "a fox", provider: "mock", duration: 3 };

test("a 429 is retried after its Retry-After with the same idempotency key", async () => {
  api.answers = [
    problem(429, "Too Many Requests", { headers: { "Retry-After": "1" } }),
    json(GENERATION, 202),
  ];
  const { client, waits } = clientOf(api);
  const made = await client.generations.create(CREATE);
  assert.equal(made.id, "gen_1");
  assert.deepEqual(
    api.requests.map((r) => r.method),
    ["POST", "POST"],
  );
  const keys = new Set(api.requests.map((r) => r.headers["idempotency-key"]));
  assert.equal(keys.size, 1); // one key, made by the SDK, on every try
  assert.match([...keys][0], /^sdk_[0-9a-f]{32}$/);
  assert.deepEqual(waits, [1000]); // exactly what Retry-After said
  assert.ok(api.requests.every((r) => r.headers.authorization === "Bearer vg_test"));
  assert.deepEqual(JSON.parse(api.requests[0].body), CREATE);
});

test("Retry-After as an HTTP date is waited until that moment", async () => {
  const at = new Date(Date.now() + 5000).toUTCString(); // whole seconds: 4 to 5 s from now
  api.answers = [problem(503, "Service Unavailable", { headers: { "Retry-After": at } }), json(GENERATION)];
  const { client, waits } = clientOf(api);
  await client.generations.get("gen_1");
  assert.equal(waits.length, 1);
  assert.ok(waits[0] > 3000 && waits[0] <= 5000, `waited ${waits[0]} ms`);
});

test("each create call has a key of its own, and a given key is sent as is", async () => {
  api.answers = [json(GENERATION, 202)];
  const { client } = clientOf(api);
  await client.generations.create(CREATE);
  await client.generations.create(CREATE);
  await client.generations.create(CREATE, { idempotencyKey: "order-42" });
  const [first, second, third] = api.requests.map((r) => r.headers["idempotency-key"]);
  assert.notEqual(first, second);
  assert.equal(third, "order-42");
});

test("503s are retried with exponential backoff and jitter", async () => {
  api.answers = [problem(503, "Unavailable"), problem(503, "Unavailable"), json(GENERATION)];
  const { client, waits } = clientOf(api);
  assert.equal((await client.generations.get("gen_1")).id, "gen_1");
  assert.equal(api.requests.length, 3);
  assert.ok(waits[0] >= 375 && waits[0] <= 500, `first wait ${waits[0]}`);
  assert.ok(waits[1] >= 750 && waits[1] <= 1000, `second wait ${waits[1]}`);
});

test("retries give up after maxRetries with a typed error", async () => {
  api.answers = [problem(429, "Too Many Requests", { headers: { "Retry-After": "2" } })];
  const { client, waits } = clientOf(api);
  const error = await client.generations.get("gen_1").catch((e) => e);
  assert.ok(error instanceof RateLimitError);
  assert.equal(api.requests.length, 4); // the first try and three retries
  assert.equal(error.retryAfter, 2);
  assert.equal(error.status, 429);
  assert.deepEqual(waits, [2000, 2000, 2000]);
});

test("a 502 on a call that is not safe to repeat is not retried; on a read it is", async () => {
  api.answers = [problem(502, "Bad Gateway")];
  const { client } = clientOf(api);
  await assert.rejects(client.generations.cancel("gen_1"), InternalServerError); // a POST with no key
  assert.equal(api.requests.length, 1);
  api.answers = [problem(504, "Gateway Timeout"), json(GENERATION)];
  api.requests.length = 0;
  await client.generations.get("gen_1");
  assert.equal(api.requests.length, 2);
});

test("no retry of a non-idempotent request after a read timeout", async () => {
  api.answers = [silence()];
  const { client, waits } = clientOf(api, { timeout: 200 });
  const error = await client.generations.cancel("gen_1").catch((e) => e);
  assert.ok(error instanceof APITimeoutError, String(error));
  assert.ok(error instanceof APIConnectionError);
  assert.equal(api.requests.length, 1); // the API may have acted on it: never repeated
  assert.deepEqual(waits, []);
});

test("a read timeout is retried where repeating is safe: a read, and a create (its key)", async () => {
  api.answers = [silence(), json(GENERATION)];
  const { client } = clientOf(api, { timeout: 200 });
  assert.equal((await client.generations.get("gen_1")).id, "gen_1");
  assert.equal(api.requests.length, 2);

  api.requests.length = 0;
  api.answers = [silence(), json(GENERATION, 202)];
  await client.generations.create(CREATE);
  assert.equal(api.requests.length, 2);
  assert.equal(api.requests[0].headers["idempotency-key"], api.requests[1].headers["idempotency-key"]);
});

test("a refused connection is retried, whatever the method, then reported", async () => {
  const port = await freePort();
  const { client, waits } = clientOf({ base: `http://127.0.0.1:${port}/v1` }, { maxRetries: 2 });
  const error = await client.generations.cancel("gen_1").catch((e) => e);
  assert.ok(error instanceof APIConnectionError && !(error instanceof APITimeoutError), String(error));
  assert.equal(waits.length, 2); // never connected: safe to repeat even a POST
});

test("an aborted signal stops the call and its retries with the signal's reason", async () => {
  const controller = new AbortController();
  api.answers = [() => controller.abort(new Error("stop"))]; // once the request has arrived; no answer
  const { client } = clientOf(api);
  await assert.rejects(client.generations.get("gen_1", { signal: controller.signal }), { message: "stop" });
  assert.equal(api.requests.length, 1);
});

for (const [status, Kind] of [
  [400, "BadRequestError"],
  [401, AuthenticationError],
  [404, NotFoundError],
  [409, ConflictError],
  [500, InternalServerError],
]) {
  test(`a ${status} becomes a typed error with the problem and its request id`, async () => {
    api.answers = [
      problem(status, "Nope", {
        headers: { "X-Request-Id": "req_42" },
        type: "urn:videogen:problem:nope",
        detail: "it went wrong",
      }),
    ];
    const { client } = clientOf(api);
    const error = await client.generations.cancel("gen_1").catch((e) => e);
    if (typeof Kind !== "string") assert.ok(error instanceof Kind, String(error));
    else assert.equal(error.name, Kind);
    assert.ok(error instanceof APIError && error instanceof APIStatusError && error instanceof VideogenError);
    assert.equal(error.status, status);
    assert.equal(error.type, "urn:videogen:problem:nope");
    assert.equal(error.title, "Nope");
    assert.equal(error.detail, "it went wrong");
    assert.equal(error.requestId, "req_42");
    assert.match(error.message, /req_42/);
  });
}

test("a 422 lists each invalid field and is not retried", async () => {
  const errors = [{ field: "duration", message: "must be 3 to 10", code: "range" }];
  api.answers = [problem(422, "Invalid request", { errors })];
  const { client } = clientOf(api);
  const error = await client.generations.create({ ...CREATE, duration: 30 }).catch((e) => e);
  assert.ok(error instanceof ValidationError);
  assert.deepEqual(
    error.errors.map((e) => [e.field, e.code]),
    [["duration", "range"]],
  );
  assert.equal(api.requests.length, 1);
});

test("an error answer that is not a problem document still becomes a typed error", async () => {
  api.answers = [
    (_request, response) => {
      response.writeHead(404, { "Content-Type": "text/plain" });
      response.end("no such thing");
    },
  ];
  const { client } = clientOf(api);
  const error = await client.generations.get("gen_1").catch((e) => e);
  assert.ok(error instanceof NotFoundError);
  assert.equal(error.detail, "no such thing");
  assert.equal(error.requestId, null);
});

function freePort() {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
