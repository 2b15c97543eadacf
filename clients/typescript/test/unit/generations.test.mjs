// Following, waiting, paging, downloading and uploading against a scripted server on 127.0.0.1; pauses go
// through an injected sleep that records them.
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { afterEach, beforeEach, test } from "node:test";
import { GenerationFailedError, NotFoundError, WaitTimeoutError, isTerminal } from "../../dist/index.js";
import { clientOf, frame, generation, json, problem, scriptedServer, stream } from "../helpers.mjs";

let api;
beforeEach(async () => {
  api = await scriptedServer();
});
afterEach(async () => {
  await api.close();
});

const EVENTS = "/v1/generations/gen_1/events";

test("events() yields each change, resumes a dropped stream with Last-Event-ID, and ends when finished", async () => {
  api.answers = [
    stream([frame("2:", generation()), frame("3:40", generation({ progress: 40 }))], "break"),
    stream([
      frame("3:80", generation({ progress: 80 })),
      frame("4:100", generation({ status: "completed", progress: 100 })),
    ]),
  ];
  const { client, waits } = clientOf(api);
  const seen = [];
  for await (const event of client.generations.events("gen_1"))
    seen.push([event.id, event.generation.status, event.generation.progress]);
  assert.deepEqual(seen, [
    ["2:", "processing", null],
    ["3:40", "processing", 40],
    ["3:80", "processing", 80],
    ["4:100", "completed", 100],
  ]);
  assert.deepEqual(
    api.requests.map((r) => [r.url, r.headers["last-event-id"]]),
    [
      [EVENTS, undefined],
      [EVENTS, "3:40"],
    ],
  );
  assert.deepEqual(waits, [500]); // one pause before reconnecting
  assert.equal(api.requests[0].headers.accept, "text/event-stream");
});

test("events() resumes from a lastEventId given, and stops reading when the caller breaks out", async () => {
  api.answers = [
    stream(
      [frame("5:10", generation({ progress: 10 })), frame("5:20", generation({ progress: 20 }))],
      "break",
    ),
  ];
  const { client } = clientOf(api);
  for await (const event of client.generations.events("gen_1", { lastEventId: "5:" })) {
    assert.equal(event.id, "5:10");
    break;
  }
  assert.equal(api.requests.length, 1);
  assert.equal(api.requests[0].headers["last-event-id"], "5:");
});

test("events() gives up after maxRetries failed reconnections, and an error status is not retried", async () => {
  api.answers = [stream([], "break")];
  const { client, waits } = clientOf(api, { maxRetries: 2 });
  await assert.rejects(
    async () => {
      for await (const _ of client.generations.events("gen_1"));
    },
    (error) => error.name === "APIConnectionError",
  );
  assert.equal(api.requests.length, 3);
  assert.deepEqual(waits, [500, 1000]);

  // A stream that ends at once, again and again, brings nothing: it is paused between, and given up on.
  api.requests.length = 0;
  waits.length = 0;
  api.answers = [stream([])];
  await assert.rejects(async () => {
    for await (const _ of client.generations.events("gen_1", { lastEventId: "9:" }));
  }, /the stream ended with nothing new/);
  assert.equal(api.requests.length, 3);
  assert.deepEqual(waits, [500, 1000]);

  api.requests.length = 0;
  api.answers = [problem(404, "Not Found")];
  await assert.rejects(async () => {
    for await (const _ of client.generations.events("gen_1"));
  }, NotFoundError);
  assert.equal(api.requests.length, 1);
});

test("wait() follows the stream, tells each change, and resolves to the completed generation", async () => {
  api.answers = [
    stream([
      frame("2:", generation()),
      frame("2:", generation()), // the same state again: not a change
      frame("3:50", generation({ progress: 50 })),
      frame("4:100", generation({ status: "completed", progress: 100, video_url: "http://x/v.mp4" })),
    ]),
  ];
  const { client } = clientOf(api);
  const told = [];
  const done = await client.generations.wait("gen_1", {
    onProgress: (g) => told.push([g.status, g.progress]),
  });
  assert.equal(done.status, "completed");
  assert.deepEqual(told, [
    ["processing", null],
    ["processing", 50],
    ["completed", 100],
  ]);
});

test("wait() rejects with GenerationFailedError when the generation fails", async () => {
  const error = { code: "provider_error", message: "it broke", provider_code: null, retriable: true };
  api.answers = [stream([frame("3:", generation({ status: "failed", error }))])];
  const { client } = clientOf(api);
  const failure = await client.generations.wait("gen_1").catch((e) => e);
  assert.ok(failure instanceof GenerationFailedError);
  assert.equal(failure.generation.error.code, "provider_error");
});

test("wait() asks with Prefer: wait when the API refuses a stream", async () => {
  api.answers = [
    problem(429, "Too Many Event Streams", {
      type: "urn:videogen:problem:too-many-streams",
      headers: { "Retry-After": "5" },
    }),
    json(generation()),
    json(generation({ status: "completed" })),
  ];
  const { client } = clientOf(api, { maxRetries: 0 });
  assert.equal((await client.generations.wait("gen_1")).status, "completed");
  assert.deepEqual(
    api.requests.map((r) => [r.url, r.headers.prefer]),
    [
      [EVENTS, undefined],
      ["/v1/generations/gen_1", "wait=25"], // below the client's 30 s timeout
      ["/v1/generations/gen_1", "wait=25"],
    ],
  );
});

test("wait() gives up at its timeout with the last state seen, and stops at the caller's signal", async () => {
  api.answers = [holdingStream(frame("2:40", generation({ progress: 40 })))];
  const { client } = clientOf(api);
  const late = await client.generations.wait("gen_1", { timeout: 300 }).catch((e) => e);
  assert.ok(late instanceof WaitTimeoutError, String(late));
  assert.equal(late.generation.progress, 40);

  const controller = new AbortController();
  api.answers = [
    holdingStream(frame("2:40", generation({ progress: 40 })), () => controller.abort(new Error("enough"))),
  ];
  await assert.rejects(client.generations.wait("gen_1", { signal: controller.signal }), {
    message: "enough",
  });
});

test("a status, provider or error code this SDK does not know is kept as a string, never an error", async () => {
  const newer = {
    provider: "veo",
    status: "upscaling", // not finished: a wait goes on
    queue_reason: "provider_quota",
    error: { code: "content_policy_v2", message: "m", provider_code: "X1", retriable: false },
    aspect_ratio: "2.39:1",
    brand_new_field: { nested: true },
  };
  api.answers = [
    json(generation(newer)),
    stream([
      frame("2:", generation(newer)),
      frame("3:", generation({ ...newer, status: "completed", error: null })),
    ]),
    json({
      data: [
        {
          id: "veo",
          enabled: true,
          capabilities: {
            durations: [4],
            aspect_ratios: ["2.39:1"],
            resolutions: ["8k"],
            default_resolution: "8k",
            image_input: true,
            seed: true,
            negative_prompt: false,
          },
        },
      ],
    }),
  ];
  const { client } = clientOf(api);
  const got = await client.generations.get("gen_1");
  assert.equal(got.provider, "veo");
  assert.equal(got.status, "upscaling");
  assert.equal(got.error.code, "content_policy_v2");
  assert.deepEqual(got.brand_new_field, { nested: true });
  assert.equal(isTerminal(got), false);
  const told = [];
  const done = await client.generations.wait("gen_1", { onProgress: (g) => told.push(g.status) });
  assert.deepEqual(told, ["upscaling", "completed"]);
  assert.equal(done.provider, "veo");
  const [provider] = await client.providers.list();
  assert.deepEqual([provider.id, provider.capabilities.resolutions], ["veo", ["8k"]]);
});

test("list() walks every page with for await, passing the filters on each; await gives one page", async () => {
  const page = (ids, next) => json({ data: ids.map((id) => generation({ id })), next_cursor: next });
  api.answers = [page(["g5", "g4"], "c1"), page(["g3", "g2"], "c2"), page(["g1"], null)];
  const { client } = clientOf(api);
  const after = new Date("2026-11-01T00:00:00Z");
  const walked = [];
  const filters = {
    status: ["completed", "failed"],
    provider: "mock",
    metadata: { order: "42" },
    created_after: after,
    limit: 2,
  };
  for await (const g of client.generations.list(filters)) walked.push(g.id);
  assert.deepEqual(walked, ["g5", "g4", "g3", "g2", "g1"]);
  const queries = api.requests.map((r) => new URL(r.url, api.origin).searchParams);
  assert.deepEqual(
    queries.map((q) => q.get("cursor")),
    [null, "c1", "c2"],
  );
  for (const q of queries) {
    assert.deepEqual(q.getAll("status"), ["completed", "failed"]);
    assert.equal(q.get("provider"), "mock");
    assert.equal(q.get("metadata[order]"), "42");
    assert.equal(q.get("created_after"), "2026-11-01T00:00:00.000Z");
    assert.equal(q.get("limit"), "2");
  }

  api.requests.length = 0;
  api.answers = [page(["g3", "g2"], "c2"), page(["g1"], null)];
  const one = await client.generations.list({ limit: 2, cursor: "c1" });
  assert.deepEqual(
    [one.data.map((g) => g.id), one.next_cursor, one.hasNextPage()],
    [["g3", "g2"], "c2", true],
  );
  const last = await one.getNextPage();
  assert.deepEqual(
    [last.data.map((g) => g.id), last.hasNextPage(), await last.getNextPage()],
    [["g1"], false, null],
  );
  assert.equal(api.requests.length, 2);
});

test("the API key goes to the API's origin only, never to a media link on another host", async () => {
  const media = await scriptedServer([
    (_request, response) => {
      response.writeHead(200, { "Content-Type": "video/mp4", "Content-Length": "6" });
      response.end("abcdef");
    },
  ]);
  try {
    api.answers = [
      json(generation({ status: "completed", video_url: `${media.origin}/bucket/gen_1.mp4?sig=x` })),
    ];
    const { client } = clientOf(api);
    const body = await client.generations.download("gen_1");
    assert.equal(await new Response(body).text(), "abcdef");
    assert.equal(api.requests[0].headers.authorization, "Bearer vg_test");
    assert.equal(media.requests.length, 1);
    assert.equal(media.requests[0].headers.authorization, undefined);
  } finally {
    await media.close();
  }
});

test("a download of a generation with no video says so", async () => {
  api.answers = [json(generation())];
  const { client } = clientOf(api);
  await assert.rejects(client.generations.download("gen_1"), /has no video \(status processing\)/);
});

test("uploads take a Blob, bytes or a Node stream, and create() uploads an image given as a file", async () => {
  const upload = {
    id: "upl_1",
    content_type: "image/png",
    bytes: 4,
    width: 1,
    height: 1,
    created_at: "x",
    expires_at: "y",
  };
  api.answers = [json(upload, 201)];
  const { client } = clientOf(api);
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
  await client.uploads.create(new File([png], "frame.png"));
  await client.uploads.create(png);
  await client.uploads.create(Readable.from([Buffer.from(png.slice(0, 2)), Buffer.from(png.slice(2))]));
  for (const [i, request] of api.requests.entries()) {
    assert.match(request.headers["content-type"], /^multipart\/form-data; boundary=/);
    const form = await new Response(request.body, {
      headers: { "Content-Type": request.headers["content-type"] },
    }).formData();
    const file = form.get("file");
    assert.deepEqual(new Uint8Array(await file.arrayBuffer()), png, `upload ${i}`);
    assert.equal(file.name, i === 0 ? "frame.png" : "image");
  }

  api.requests.length = 0;
  api.answers = [json(upload, 201), json(generation(), 202)];
  await client.generations.create({ prompt: "p", provider: "mock", duration: 3, image: new Blob([png]) });
  assert.deepEqual(
    api.requests.map((r) => r.url),
    ["/v1/uploads", "/v1/generate"],
  );
  assert.deepEqual(JSON.parse(api.requests[1].body).image, { upload_id: "upl_1" });
});

test("delete() sends DELETE and resolves to nothing on 204; uploads.get() and uploads.delete() likewise", async () => {
  const empty = (_request, response) => {
    response.writeHead(204);
    response.end();
  };
  const upload = { id: "upl_1", content_type: "image/png", bytes: 4, width: 1, height: 1 };
  api.answers = [empty, json(upload), empty, problem(404, "Not Found")];
  const { client } = clientOf(api);
  assert.equal(await client.generations.delete("gen_1"), undefined);
  assert.deepEqual(await client.uploads.get("upl_1"), upload);
  assert.equal(await client.uploads.delete("upl_1"), undefined);
  await assert.rejects(client.uploads.delete("upl_1"), NotFoundError);
  assert.deepEqual(
    api.requests.map((r) => `${r.method} ${r.url}`),
    [
      "DELETE /v1/generations/gen_1",
      "GET /v1/uploads/upl_1",
      "DELETE /v1/uploads/upl_1",
      "DELETE /v1/uploads/upl_1",
    ],
  );
});

/** An event stream that sends `data`, calls `then`, and holds the connection open until the client leaves. */
function holdingStream(data, then = () => undefined) {
  return (request, response) => {
    response.writeHead(200, { "Content-Type": "text/event-stream" });
    response.write(data);
    then();
  };
}

test("models.list() filters by what a model can do, and create() names a model", async () => {
  const model = {
    provider: "runway",
    id: "gen4_turbo",
    default: false,
    enabled: true,
    description: "",
    durations: [5, 10],
    aspect_ratios: ["16:9", "9:16"],
    resolutions: ["720p"],
    default_resolution: "720p",
    text_to_video: false,
    image_to_video: true,
    seed: true,
    negative_prompt: false,
    prices: [{ resolution: null, usd_per_second: 0.05 }],
  };
  api.answers = [json({ data: [model] }), json(generation({ model: "veo3.1" }), 202)];
  const { client } = clientOf(api);
  const found = await client.models.list({ provider: "runway", image_to_video: true, duration: 10 });
  assert.deepEqual(found, [model]);
  const made = await client.generations.create({
    prompt: "a fox",
    provider: "runway",
    duration: 8,
    model: "veo3.1",
  });
  assert.equal(made.model, "veo3.1");
  assert.equal(api.requests[0].url, "/v1/models?provider=runway&image_to_video=true&duration=10");
  assert.equal(JSON.parse(api.requests[1].body).model, "veo3.1");
});
