// Every call the console makes is a call of the public API, on this origin, with the tenant's key as a bearer
// token. The key lives in memory and in sessionStorage (this tab), or in localStorage only when the user ticked
// "remember"; it never goes in a URL.

const STORAGE_KEY = "videogen.apiKey";
let apiKey = null;

export function loadKey() {
  apiKey = sessionStorage.getItem(STORAGE_KEY) || localStorage.getItem(STORAGE_KEY) || null;
  return apiKey;
}

export function hasKey() {
  return Boolean(apiKey);
}

export function setKey(key, remember) {
  apiKey = key;
  sessionStorage.setItem(STORAGE_KEY, key);
  if (remember) localStorage.setItem(STORAGE_KEY, key);
  else localStorage.removeItem(STORAGE_KEY);
}

export function forgetKey() {
  apiKey = null;
  sessionStorage.removeItem(STORAGE_KEY);
  localStorage.removeItem(STORAGE_KEY);
}

/** An answer other than 2xx, with the API's RFC 9457 problem when it sent one. */
export class ApiError extends Error {
  constructor(status, problem) {
    const text = problem?.detail || problem?.title || `HTTP ${status}`;
    super(text);
    this.status = status;
    this.problem = problem || {};
  }

  get fieldErrors() {
    return Array.isArray(this.problem.errors) ? this.problem.errors : [];
  }
}

let onUnauthorized = () => {};
export function whenUnauthorized(callback) {
  onUnauthorized = callback;
}

function headers(extra = {}, key = apiKey) {
  const all = { Accept: "application/json", ...extra };
  if (key) all.Authorization = `Bearer ${key}`;
  return all;
}

async function problemOf(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

/** Call path (under /v1) on this origin; returns the parsed JSON body (null for 204). ``body`` is sent as
 * JSON; ``form`` (a FormData) as multipart/form-data. */
export async function api(method, path, { body, form, query, headers: extra, key, signal } = {}) {
  const url = new URL(`/v1${path}`, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    for (const v of [].concat(value)) if (v !== undefined && v !== null && v !== "") url.searchParams.append(name, v);
  }
  const init = { method, headers: headers(extra, key ?? apiKey), signal, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  } else if (form !== undefined) {
    init.body = form; // the browser writes the multipart Content-Type with its boundary
  }
  const response = await fetch(url, init);
  if (response.status === 204) return null;
  if (!response.ok) {
    const error = new ApiError(response.status, await problemOf(response));
    if (response.status === 401 && key === undefined) onUnauthorized(error);
    throw error;
  }
  return response.json();
}

/** GET path (under /v1) on this origin with the key, its body as a Blob (a file to save: a batch's results). */
export async function apiDownload(path, { signal } = {}) {
  const url = new URL(`/v1${path}`, window.location.origin);
  const response = await fetch(url, {
    headers: headers({ Accept: "*/*" }), signal, credentials: "omit", cache: "no-store",
  });
  if (!response.ok) {
    const error = new ApiError(response.status, await problemOf(response));
    if (response.status === 401) onUnauthorized(error);
    throw error;
  }
  return response.blob();
}

/** The API's OpenAPI document (public), fetched once. */
let documentPromise = null;
export function openapi() {
  if (!documentPromise) {
    documentPromise = fetch("/openapi.json", { credentials: "omit" }).then((r) => {
      if (!r.ok) throw new Error(`the API reference answered ${r.status}`);
      return r.json();
    });
    documentPromise.catch(() => { documentPromise = null; });
  }
  return documentPromise;
}

export function resolve(document, schema) {
  let node = schema;
  while (node && node.$ref) {
    node = node.$ref.replace(/^#\//, "").split("/").reduce((at, part) => at[part], document);
  }
  return node;
}

/** The values of an enum schema in the document (e.g. "Status", "Provider", "EventType"). */
export async function enumValues(name) {
  const doc = await openapi();
  return resolve(doc, doc.components.schemas[name]).enum || [];
}

/**
 * Follow a generation's Server-Sent Events stream (GET /v1/generations/{id}/events) with fetch, so the key
 * travels in the Authorization header (EventSource cannot send one). Calls onGeneration for every event;
 * reconnects with Last-Event-ID after a break, and stops when the generation is finished or signal aborts.
 */
export async function followGeneration(id, onGeneration, signal) {
  let lastId = null;
  let delay = 1000;
  while (!signal.aborted) {
    let finished = false;
    try {
      const extra = { Accept: "text/event-stream" };
      if (lastId) extra["Last-Event-ID"] = lastId;
      const response = await fetch(`/v1/generations/${encodeURIComponent(id)}/events`, {
        headers: headers(extra), signal, credentials: "omit", cache: "no-store",
      });
      if (!response.ok) {
        if (response.status === 401) onUnauthorized(new ApiError(401, await problemOf(response)));
        if (response.status === 404 || response.status === 401) return;
        throw new ApiError(response.status, await problemOf(response));
      }
      for await (const event of sseEvents(response.body, signal)) {
        if (event.id) lastId = event.id;
        if (event.type !== "generation" || !event.data) continue;
        const generation = JSON.parse(event.data);
        delay = 1000;
        onGeneration(generation);
        if (generation.status === "completed" || generation.status === "failed") finished = true;
      }
    } catch (error) {
      if (signal.aborted) return;
    }
    if (finished) return;
    await new Promise((resolveWait) => {
      const timer = window.setTimeout(resolveWait, delay);
      signal.addEventListener("abort", () => { window.clearTimeout(timer); resolveWait(); }, { once: true });
    });
    delay = Math.min(delay * 2, 15000);
  }
}

/** Parse a text/event-stream body into {type, data, id} events (the WHATWG rules we need). */
async function* sseEvents(body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buffer = "";
  let event = { type: "message", data: [], id: null };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === "") {
          if (event.data.length) yield { type: event.type, data: event.data.join("\n"), id: event.id };
          event = { type: "message", data: [], id: event.id };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        let value2 = colon < 0 ? "" : line.slice(colon + 1);
        if (value2.startsWith(" ")) value2 = value2.slice(1);
        if (name === "event") event.type = value2;
        else if (name === "data") event.data.push(value2);
        else if (name === "id") event.id = value2;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
