// API keys, scopes and budgets against the real stack (see generations.test.mjs). The account is shared with
// the files running beside this one, so its budgets are set far above what they use and put back after, and
// the keys made here make no generation (generations.test.mjs counts the keys that made one).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AuthenticationError,
  BudgetExceededError,
  PermissionDeniedError,
  RateLimitError,
  Videogen,
} from "../../dist/index.js";
import { runTag } from "../helpers.mjs";

const client = new Videogen(); // VIDEOGEN_API_KEY (holding every scope), VIDEOGEN_BASE_URL

test("a key made with narrower scopes is refused beyond them with the scope it lacks; listed, renamed, revoked", async () => {
  const name = `dashboard ${runTag()}`;
  const expiry = new Date(Date.now() + 86_400_000);
  const made = await client.apiKeys.create({ name, scopes: ["generations:read"], expires_at: expiry });
  assert.deepEqual(made.scopes, ["generations:read"]);
  assert.ok(made.secret.startsWith(made.prefix) && made.secret.endsWith(made.last_four), made.prefix);
  assert.equal(Date.parse(made.expires_at), expiry.getTime());

  const dashboard = new Videogen({ apiKey: made.secret });
  assert.ok(Array.isArray((await dashboard.generations.list({ limit: 1 })).data)); // within its scopes
  const refusals = [
    [
      () => dashboard.generations.create({ prompt: "no", provider: "mock", duration: 3 }),
      "generations:write",
    ],
    [() => dashboard.webhooks.list(), "webhooks:read"],
    [() => dashboard.events.list(), "events:read"],
    [() => dashboard.budgets.get(), "usage:read"],
    [() => dashboard.apiKeys.create({ name: "wider", scopes: ["generations:read"] }), "keys:write"],
  ];
  for (const [call, scope] of refusals) {
    const error = await call().catch((e) => e);
    assert.ok(error instanceof PermissionDeniedError, String(error));
    assert.equal(error.status, 403);
    assert.equal(error.scope, scope);
    assert.match(error.type, /insufficient-scope$/);
    assert.ok(error.requestId);
  }

  const listed = [];
  for await (const key of client.apiKeys.list({ limit: 1 })) listed.push(key); // a page per key
  const mine = listed.find((key) => key.id === made.id);
  assert.equal(mine.name, name);
  assert.equal(mine.secret, undefined); // shown once, at creation
  assert.equal((await client.apiKeys.get(made.id)).last_four, made.last_four);
  const renamed = await client.apiKeys.update(made.id, { name: `${name} (old)` });
  assert.equal(renamed.name, `${name} (old)`);

  const revoked = await client.apiKeys.revoke(made.id);
  assert.ok(revoked.revoked_at);
  await assert.rejects(dashboard.generations.list(), AuthenticationError); // at once on this replica
});

test("budgets are set and read back with what is left; a key's own budget refuses a generation, untried again", async () => {
  const before = await client.budgets.get();
  try {
    // Sorted by name, as the check of the remaining budgets' names below compares them.
    const limits = {
      daily_video_seconds: 1_000_000,
      monthly_cost: 250_000.5,
      monthly_video_seconds: 10_000_000,
    };
    const set = await client.budgets.set(limits);
    assert.deepEqual([set.daily_video_seconds, set.monthly_video_seconds], [1_000_000, 10_000_000]);
    assert.deepEqual([set.daily_cost, set.monthly_cost], [null, 250_000.5]); // US dollars
    const read = await client.budgets.get();
    assert.deepEqual([read.daily_video_seconds, read.monthly_video_seconds], [1_000_000, 10_000_000]);
    assert.deepEqual(read.remaining.map((b) => b.budget).sort(), Object.keys(limits));
    for (const left of read.remaining) {
      assert.equal(left.api_key_id, null); // the account's
      assert.equal(left.limit, limits[left.budget]);
      assert.equal(left.used + left.remaining, left.limit);
      assert.ok(Date.parse(left.resets_at) > Date.now() && Date.parse(left.period_start) <= Date.now());
    }
    const usage = await client.usage.get();
    assert.deepEqual(usage.budgets.map((b) => [b.budget, b.limit]).sort(), [
      ["daily_video_seconds", 1_000_000],
      ["monthly_cost", 250_000.5],
      ["monthly_video_seconds", 10_000_000],
    ]);
  } finally {
    const { daily_video_seconds, monthly_video_seconds, daily_cost, monthly_cost } = before;
    await client.budgets.set({ daily_video_seconds, monthly_video_seconds, daily_cost, monthly_cost });
  }
  assert.deepEqual(await client.budgets.get(), before);

  const batch = await client.apiKeys.create({
    name: `batch ${runTag()}`,
    scopes: ["generations:write"],
    budgets: { daily_video_seconds: 2 },
  });
  try {
    assert.deepEqual(batch.budgets, {
      daily_video_seconds: 2,
      monthly_video_seconds: null,
      daily_cost: null,
      monthly_cost: null,
    });
    let requests = 0;
    const counted = new Videogen({
      apiKey: batch.secret,
      fetch: (input, init) => {
        requests += 1;
        return fetch(input, init);
      },
    });
    const refused = await counted.generations
      .create({ prompt: "a kite", provider: "mock", duration: 3 })
      .catch((e) => e);
    assert.ok(refused instanceof BudgetExceededError && refused instanceof RateLimitError, String(refused));
    assert.equal(requests, 1); // not retried
    const { budget, api_key_id, limit, used, remaining, requested, resets_at } = refused.budget;
    assert.deepEqual(
      { budget, api_key_id, limit, used, remaining, requested },
      { budget: "daily_video_seconds", api_key_id: batch.id, limit: 2, used: 0, remaining: 2, requested: 3 },
    );
    assert.ok(Date.parse(resets_at) > Date.now());
    assert.ok(refused.retryAfter > 0 && refused.retryAfter <= 86_400, String(refused.retryAfter));
    // Refused before anything was written: the key made nothing, and its budget is whole.
    const spent = await client.usage.get({ api_key_id: batch.id });
    assert.equal(spent.total.generations, 0);
    assert.deepEqual(
      spent.budgets.filter((b) => b.api_key_id === batch.id).map((b) => [b.budget, b.remaining]),
      [["daily_video_seconds", 2]],
    );
  } finally {
    await client.apiKeys.revoke(batch.id);
  }
});
