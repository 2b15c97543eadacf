// API keys, budgets and events against a scripted server on 127.0.0.1: the requests as the API documents
// them, and a key's refusals as typed errors (a missing scope, a spent budget: never retried).
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { APIError, BudgetExceededError, PermissionDeniedError, RateLimitError } from "../../dist/index.js";
import { clientOf, json, problem, scriptedServer } from "../helpers.mjs";

let api;
beforeEach(async () => {
  api = await scriptedServer();
});
afterEach(async () => {
  await api.close();
});

const KEY = Object.freeze({
  id: "key_1",
  name: "batch job",
  scopes: ["generations:write"],
  prefix: "vg_",
  last_four: "abcd",
  budgets: { daily_video_seconds: 600, monthly_video_seconds: null },
  created_at: "2026-11-24T10:00:00.000Z",
  last_used_at: null,
  expires_at: null,
  revoked_at: null,
});
const BUDGETS = Object.freeze({
  daily_video_seconds: 600,
  monthly_video_seconds: null,
  threshold_percent: 80,
  remaining: [
    {
      api_key_id: null,
      budget: "daily_video_seconds",
      limit: 600,
      used: 15,
      remaining: 585,
      period_start: "2026-11-24T00:00:00.000Z",
      resets_at: "2026-11-25T00:00:00.000Z",
    },
  ],
});

function sent(request) {
  return [request.method, request.url, request.body.length ? JSON.parse(request.body) : null];
}

test("a 403 becomes PermissionDeniedError naming the scope the key lacks, and is not retried", async () => {
  api.answers = [
    problem(403, "Insufficient scope", {
      type: "urn:videogen:problem:insufficient-scope",
      detail: "this API key does not hold webhooks:write",
      scope: "webhooks:write",
      headers: { "X-Request-Id": "req_7" },
    }),
  ];
  const { client, waits } = clientOf(api);
  const error = await client.webhooks.delete("wh_1").catch((e) => e);
  assert.ok(error instanceof PermissionDeniedError && error instanceof APIError, String(error));
  assert.equal(error.name, "PermissionDeniedError");
  assert.equal(error.status, 403);
  assert.equal(error.scope, "webhooks:write");
  assert.equal(error.requestId, "req_7");
  assert.equal(api.requests.length, 1);
  assert.deepEqual(waits, []);

  // From a proxy in front of the API: still the class for its status, with no scope to name.
  api.answers = [problem(403, "Forbidden")];
  const plain = await client.budgets.get().catch((e) => e);
  assert.ok(plain instanceof PermissionDeniedError);
  assert.equal(plain.scope, null);
});

test("a spent budget (429 budget-exceeded) rejects at once with which budget, whose, and until when", async () => {
  const left = {
    budget: "daily_video_seconds",
    api_key_id: "key_1",
    limit: 8,
    used: 5,
    remaining: 3,
    requested: 5,
    resets_at: "2026-11-25T00:00:00.000Z",
  };
  const spent = {
    type: "urn:videogen:problem:budget-exceeded",
    detail: "3 of the key's 8 daily seconds are left; the generation needs 5",
    ...left,
    headers: { "Retry-After": "10800" },
  };
  // A rate limit first, retried after its Retry-After; then the budget's refusal, which no wait helps.
  api.answers = [
    problem(429, "Too Many Requests", { headers: { "Retry-After": "1" } }),
    problem(429, "Budget exceeded", spent),
  ];
  const { client, waits } = clientOf(api);
  const error = await client.generations
    .create({ prompt: "a kite", provider: "mock", duration: 5 })
    .catch((e) => e);
  assert.ok(error instanceof BudgetExceededError, String(error));
  assert.ok(error instanceof RateLimitError); // caught where rate limits are
  assert.equal(error.name, "BudgetExceededError");
  assert.equal(api.requests.length, 2);
  assert.deepEqual(waits, [1000]); // the rate limit's wait only
  assert.equal(error.retryAfter, 10800);
  const said = Object.fromEntries(Object.keys(left).map((field) => [field, error.budget[field]]));
  assert.deepEqual(said, left);

  // A wait never starts: createAndWait rejects the same way, after one request.
  api.requests.length = 0;
  api.answers = [problem(429, "Budget exceeded", spent)];
  await assert.rejects(
    client.generations.createAndWait({ prompt: "a kite", provider: "mock", duration: 5 }),
    BudgetExceededError,
  );
  assert.equal(api.requests.length, 1);
});

test("api keys: made with scopes, budgets and an expiry, paged, read, renamed, revoked", async () => {
  const { client } = clientOf(api);
  api.answers = [json({ ...KEY, secret: "vg_secret_abcd" }, 201)];
  const expiry = new Date("2027-01-01T00:00:00Z");
  const made = await client.apiKeys.create({
    name: "batch job",
    scopes: ["generations:write", "videos:upscale"], // a scope newer than this SDK is passed on
    expires_at: expiry,
    budgets: { daily_video_seconds: 600 },
  });
  assert.equal(made.secret, "vg_secret_abcd");
  assert.deepEqual(sent(api.requests[0]), [
    "POST",
    "/v1/api-keys",
    {
      name: "batch job",
      scopes: ["generations:write", "videos:upscale"],
      expires_at: "2027-01-01T00:00:00.000Z",
      budgets: { daily_video_seconds: 600 },
    },
  ]);
  assert.equal(api.requests[0].headers["idempotency-key"], undefined);

  api.requests.length = 0;
  api.answers = [
    json({
      data: [
        { ...KEY, id: "key_3" },
        { ...KEY, id: "key_2" },
      ],
      next_cursor: "c1",
    }),
    json({ data: [KEY], next_cursor: null }),
  ];
  const walked = [];
  for await (const key of client.apiKeys.list({ limit: 2 })) walked.push(key.id);
  assert.deepEqual(walked, ["key_3", "key_2", "key_1"]);
  assert.deepEqual(
    api.requests.map((r) => r.url),
    ["/v1/api-keys?limit=2", "/v1/api-keys?limit=2&cursor=c1"],
  );

  api.requests.length = 0;
  api.answers = [
    json(KEY),
    json({ ...KEY, name: "nightly" }),
    json({ ...KEY, revoked_at: "2026-11-24T11:00:00.000Z" }),
  ];
  assert.equal((await client.apiKeys.get("key_1")).id, "key_1");
  const renamed = await client.apiKeys.update("key_1", {
    name: "nightly",
    budgets: { monthly_video_seconds: 9000 },
  });
  assert.equal(renamed.name, "nightly");
  const revoked = await client.apiKeys.revoke("key_1");
  assert.equal(revoked.revoked_at, "2026-11-24T11:00:00.000Z");
  assert.deepEqual(api.requests.map(sent), [
    ["GET", "/v1/api-keys/key_1", null],
    ["PATCH", "/v1/api-keys/key_1", { name: "nightly", budgets: { monthly_video_seconds: 9000 } }],
    ["DELETE", "/v1/api-keys/key_1", null],
  ]);
});

test("budgets: read with what is left, replaced as a whole", async () => {
  api.answers = [json(BUDGETS), json({ ...BUDGETS, daily_video_seconds: null, remaining: [] })];
  const { client } = clientOf(api);
  const now = await client.budgets.get();
  assert.deepEqual(
    now.remaining.map((b) => [b.budget, b.remaining]),
    [["daily_video_seconds", 585]],
  );
  const cleared = await client.budgets.set({ monthly_video_seconds: null });
  assert.equal(cleared.daily_video_seconds, null);
  assert.deepEqual(api.requests.map(sent), [
    ["GET", "/v1/budgets", null],
    ["PUT", "/v1/budgets", { monthly_video_seconds: null }],
  ]);
});

test("events: the filters go with every page, types repeated; one read by id; a newer type is kept", async () => {
  const event = (id, type) => ({
    id,
    type,
    subject: { type: "generation", id: "gen_1" },
    data: { id: "gen_1", status: "completed" },
    created_at: "2026-11-24T10:00:00.000Z",
  });
  api.answers = [
    json({ data: [event("evt_3", "video.upscaled")], next_cursor: "c1" }),
    json({ data: [event("evt_2", "video.completed")], next_cursor: null }),
  ];
  const { client } = clientOf(api);
  const filters = {
    type: ["video.completed", "video.upscaled"],
    subject_id: "gen_1",
    created_after: new Date("2026-11-01T00:00:00Z"),
    limit: 1,
  };
  const walked = [];
  for await (const e of client.events.list(filters)) walked.push([e.id, e.type]);
  assert.deepEqual(walked, [
    ["evt_3", "video.upscaled"],
    ["evt_2", "video.completed"],
  ]);
  const urls = api.requests.map((r) => new URL(r.url, api.origin));
  assert.deepEqual(
    urls.map((url) => [url.pathname, url.searchParams.get("cursor")]),
    [
      ["/v1/events", null],
      ["/v1/events", "c1"],
    ],
  );
  for (const { searchParams: q } of urls) {
    assert.deepEqual(q.getAll("type"), ["video.completed", "video.upscaled"]);
    assert.equal(q.get("subject_id"), "gen_1");
    assert.equal(q.get("created_after"), "2026-11-01T00:00:00.000Z");
    assert.equal(q.get("limit"), "1");
  }

  api.requests.length = 0;
  api.answers = [json(event("evt_gen_1/x", "webhook.test"))];
  const one = await client.events.get("evt_gen_1/x");
  assert.equal(one.type, "webhook.test");
  assert.equal(api.requests[0].url, "/v1/events/evt_gen_1%2Fx"); // the id is one path segment
});
