// Test helpers: a small real HTTP server on 127.0.0.1 whose answers each test scripts, and a client whose
// waits are recorded instead of slept.
import { createServer } from "node:http";
import { Videogen } from "../dist/index.js";

export const GENERATION = Object.freeze({
  id: "gen_1",
  status: "processing",
  prompt: "a fox",
  provider: "mock",
  duration: 3,
  video_url: null,
  thumbnail_url: null,
  error: null,
  progress: null,
  queue_reason: null,
  timeline: [],
  aspect_ratio: null,
  resolution: null,
  seed: null,
  negative_prompt: null,
  metadata: {},
  image: null,
  created_at: "2026-11-24T10:00:00.000Z",
  updated_at: "2026-11-24T10:00:00.000Z",
  deleted: false,
  deleted_at: null,
});

export function generation(fields = {}) {
  return { ...GENERATION, ...fields };
}

/** An answer: JSON with a status and headers. */
export function json(body, status = 200, headers = {}) {
  return (_request, response) => {
    response.writeHead(status, { "Content-Type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };
}

/** A problem document answer. */
export function problem(status, title, { headers = {}, ...extra } = {}) {
  const body = { type: "about:blank", title, status, instance: "/v1/x", ...extra };
  return (_request, response) => {
    response.writeHead(status, { "Content-Type": "application/problem+json", ...headers });
    response.end(JSON.stringify(body));
  };
}

/** An answer that never comes (the connection is held until the client leaves). */
export function silence() {
  return () => undefined;
}

/** One Server-Sent Events frame of a generation. */
export function frame(id, view) {
  return `id: ${id}\nevent: generation\ndata: ${JSON.stringify(view)}\n\n`;
}

/** An event stream of `frames`; then "end" (a clean end) or "break" (the connection cut). */
export function stream(frames, then = "end") {
  return (request, response) => {
    response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    response.flushHeaders();
    for (const data of frames) response.write(data);
    // Cut once everything written has left (a write's callback), so the client reads it all first.
    if (then === "break") response.write("", () => response.socket.destroy());
    else response.end();
  };
}

/**
 * A server on 127.0.0.1 answering each request with the next of `answers` (the last one again once they run
 * out); `requests` records each request's method, url, headers and body.
 */
export async function scriptedServer(answers = []) {
  const api = { answers, requests: [], base: "", origin: "" };
  const sockets = new Set();
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    api.requests.push({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: Buffer.concat(chunks),
    });
    const answer = api.answers[Math.min(api.requests.length, api.answers.length) - 1];
    answer(request, response);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  api.origin = `http://127.0.0.1:${server.address().port}`;
  api.base = `${api.origin}/v1`;
  api.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return api;
}

/** A client of `api` whose waits are recorded in `waits` (milliseconds) rather than slept. */
export function clientOf(api, options = {}) {
  const waits = [];
  const client = new Videogen({
    apiKey: "vg_test",
    baseURL: api.base,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...options,
  });
  return { client, waits };
}

/** What a stack test is given by the pytest module that starts the stack: a folder for what it writes, the
 * first frame to upload. The key and base URL come as VIDEOGEN_API_KEY and VIDEOGEN_BASE_URL. */
export const STACK = {
  output: process.env.SDK_TEST_OUTPUT,
  frame: process.env.SDK_TEST_FRAME,
};

/** A mark of one test run, for metadata filters that find only this run's generations. */
export function runTag() {
  return Math.random().toString(36).slice(2, 10);
}

/** A webhook receiver on 127.0.0.1: `next(match)` resolves to the first delivery (headers and exact body
 * bytes) that `match`es, arrived or to come. */
export async function receiver() {
  const arrived = [];
  const waiting = [];
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const delivery = { headers: request.headers, body: Buffer.concat(chunks) };
    arrived.push(delivery);
    response.writeHead(204).end();
    for (const waiter of [...waiting]) {
      if (waiter.match(delivery)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve(delivery);
      }
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    arrived,
    next(match, timeoutMs = 60_000) {
      const found = arrived.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve };
        waiting.push(waiter);
        setTimeout(() => reject(new Error(`no matching delivery in ${timeoutMs} ms`)), timeoutMs).unref();
      });
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A TCP proxy on 127.0.0.1 to `target` (host:port) that can cut every connection through it at once;
 * `heads` holds the start of each request sent through it. */
export async function cuttingProxy(target) {
  const { connect, createServer: createTcpServer } = await import("node:net");
  const [host, port] = target.split(":");
  const open = new Set();
  const heads = [];
  const server = createTcpServer((client) => {
    const upstream = connect(Number(port), host);
    open.add(client);
    open.add(upstream);
    client.once("data", (chunk) => heads.push(chunk.toString("latin1")));
    client.pipe(upstream).on("error", () => undefined);
    upstream.pipe(client).on("error", () => undefined);
    for (const socket of [client, upstream]) {
      socket.on("error", () => undefined);
      socket.on("close", () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}/v1`,
    heads,
    cut() {
      for (const socket of open) socket.destroy();
    },
    close: () => {
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The duration in seconds an MP4 file declares (its movie header, mvhd). */
export function mp4Seconds(bytes) {
  const at = Buffer.from(bytes).indexOf("mvhd");
  assertFound(at);
  const view = new DataView(bytes.buffer, bytes.byteOffset + at + 4);
  const version = view.getUint8(0);
  if (version === 1) return Number(view.getBigUint64(24)) / view.getUint32(20);
  return view.getUint32(16) / view.getUint32(12);
}

function assertFound(at) {
  if (at < 0) throw new Error("no movie header (mvhd): not an MP4 file");
}
