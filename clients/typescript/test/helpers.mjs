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
    api.requests.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks) });
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
