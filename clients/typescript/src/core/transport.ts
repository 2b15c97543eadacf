/**
 * One HTTP call with the SDK's retry policy (the Python SDK's): exponential backoff with jitter,
 * `Retry-After` honoured, and only what is safe to repeat repeated. Only the platform's `fetch`,
 * `AbortController` and `URL`: it runs unchanged on Node, Deno, Bun, browsers and edge runtimes.
 */
import type { Problem } from "../models.js";
import {
  APIConnectionError,
  APITimeoutError,
  BudgetExceededError,
  VideogenError,
  statusError,
} from "./errors.js";
import { Page, PagePromise } from "./pagination.js";
import { EventParser, type ServerSentEvent } from "./sse.js";

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
/** Waits `ms` milliseconds (between retries and reconnections). */
export type Sleep = (ms: number) => Promise<void>;

/** Options any call takes as its last argument. */
export interface RequestOptions {
  /** Stops the call (and its retries); the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Milliseconds each try may take until its answer is read (on a stream: between two pieces of it). */
  timeout?: number;
  /** Tries after the first, for this call. */
  maxRetries?: number;
  /** More headers to send. */
  headers?: Record<string, string>;
}

export const REQUEST_ID = "x-request-id";
export const IDEMPOTENCY_KEY = "Idempotency-Key";
/** Methods the API treats as idempotent: a repeat changes nothing more than the first did. */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"]);
const MAX_RETRY_AFTER_S = 60;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8000;
// Error codes of a connection that was never made (Node's and undici's names): the request never left, so
// repeating it is always safe.
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The wait before retry number `retry` (0 for the first): `Retry-After` if the API sent one (at most a
 * minute), else 0.5 s doubling to at most 8 s, less up to a quarter at random. */
export function retryDelayMs(retry: number, retryAfterS: number | null, random: number): number {
  if (retryAfterS !== null) return Math.min(Math.max(retryAfterS, 0), MAX_RETRY_AFTER_S) * 1000;
  return Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retry) * (1 - 0.25 * random);
}

/** `Retry-After` as seconds from now: delta-seconds or an HTTP date; null if absent or unreadable. */
export function retryAfterSeconds(headers: Headers, now: number = Date.now()): number | null {
  const value = headers.get("retry-after")?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const moment = Date.parse(value);
  return Number.isNaN(moment) ? null : (moment - now) / 1000;
}

/** Query parameters: unset ones left out, lists repeated, `Date`s as ISO 8601, objects as `name[key]`. */
export type QueryValue = string | number | boolean | Date | null | undefined | readonly unknown[] | object;

function queryText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

export function queryString(query: Record<string, QueryValue> | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) params.append(name, queryText(item));
    } else if (typeof value === "object" && !(value instanceof Date)) {
      for (const [key, item] of Object.entries(value)) {
        if (item !== undefined && item !== null) params.append(`${name}[${key}]`, queryText(item));
      }
    } else {
      params.append(name, queryText(value));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** A try's own abort signal: aborted by the caller's signal, or after `ms` (a timeout; `reset` restarts it). */
export class Deadline {
  readonly signal: AbortSignal;
  timedOut = false;
  readonly #controller = new AbortController();
  readonly ms: number;
  readonly #outer: AbortSignal | undefined;
  readonly #onAbort = () => this.#controller.abort(this.#outer?.reason);
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(outer: AbortSignal | undefined, ms: number) {
    this.signal = this.#controller.signal;
    this.ms = ms;
    this.#outer = outer;
    if (outer?.aborted) this.#controller.abort(outer.reason);
    outer?.addEventListener("abort", this.#onAbort, { once: true });
    this.reset();
  }

  /** (Re)starts the timer. */
  reset(): void {
    this.stop();
    this.#timer = setTimeout(() => {
      this.timedOut = true;
      this.#controller.abort(new APITimeoutError(`no answer in ${this.ms} ms`));
    }, this.ms);
  }

  /** Stops the timer (while the caller, not the network, has the turn). */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Stops the timer and lets go of the caller's signal. */
  clear(): void {
    this.stop();
    this.#outer?.removeEventListener("abort", this.#onAbort);
  }

  /** Ends the try: its request, if still going, is aborted. */
  abort(): void {
    this.clear();
    this.#controller.abort();
  }
}

/** Whether `error` (thrown by fetch) says no connection was ever made. */
function neverConnected(error: unknown): boolean {
  for (
    let cause = error;
    cause instanceof Error || isObject(cause);
    cause = (cause as { cause?: unknown }).cause
  ) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && NOT_CONNECTED.has(code)) return true;
    const errors = (cause as { errors?: unknown }).errors; // AggregateError: one per address tried
    if (Array.isArray(errors) && errors.length > 0 && errors.every(neverConnected)) return true;
  }
  return false;
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/** The problem document of an error answer (or one made from its status and text). */
export function problemOf(response: Response, text: string): Problem {
  try {
    const body: unknown = JSON.parse(text);
    if (isObject(body) && !Array.isArray(body)) return body as Problem;
  } catch {
    // not JSON: below
  }
  const problem: Problem = { type: "about:blank", title: response.statusText, status: response.status };
  if (text) problem.detail = text.slice(0, 500);
  return problem;
}

export function errorOf(response: Response, text: string): VideogenError {
  return statusError(
    response.status,
    problemOf(response, text),
    response.headers.get(REQUEST_ID),
    retryAfterSeconds(response.headers),
  );
}

export interface TransportOptions {
  apiKey: string;
  baseURL: string;
  timeout: number;
  maxRetries: number;
  fetch: Fetch;
  sleep: Sleep;
  random: () => number;
}

export interface Call extends RequestOptions {
  query?: Record<string, QueryValue>;
  /** A JSON body. */
  json?: unknown;
  /** A multipart body. */
  form?: FormData;
}

/** Calls to the API at `baseURL` (ending in `/v1/`). */
export class Transport {
  readonly baseURL: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly #authorization: string;
  readonly #origin: string;
  readonly #fetch: Fetch;
  readonly #sleep: Sleep;
  readonly #random: () => number;

  constructor(options: TransportOptions) {
    this.baseURL = options.baseURL.replace(/\/+$/, "") + "/";
    this.#origin = new URL(this.baseURL).origin;
    this.#authorization = `Bearer ${options.apiKey}`;
    this.timeout = options.timeout;
    this.maxRetries = options.maxRetries;
    this.#fetch = options.fetch;
    this.#sleep = options.sleep;
    this.#random = options.random;
  }

  /** `path` (relative to the API's base URL, or absolute) as an absolute URL. */
  url(path: string, query?: Record<string, QueryValue>): string {
    return new URL(path, this.baseURL).toString() + queryString(query);
  }

  /** The headers for a request to `url`: the API key only if it is the API's own origin. */
  headers(url: string, extra?: Record<string, string>): Headers {
    const headers = new Headers(extra);
    if (new URL(url).origin === this.#origin) headers.set("Authorization", this.#authorization);
    else headers.delete("Authorization");
    return headers;
  }

  /** The answer's JSON (undefined for an empty answer), retried where safe; the SDK's errors otherwise. */
  async request<T>(method: string, path: string, call: Call = {}): Promise<T> {
    const url = this.url(path, call.query);
    const headers = this.headers(url, { Accept: "application/json", ...call.headers });
    let body: BodyInit | undefined;
    if (call.json !== undefined) {
      headers.set("Content-Type", "application/json");
      body = JSON.stringify(call.json);
    } else if (call.form !== undefined) {
      body = call.form;
    }
    // Repeating it changes nothing: an idempotent method, or a call the API deduplicates by its key.
    const repeatable = IDEMPOTENT_METHODS.has(method) || headers.has(IDEMPOTENCY_KEY);
    const maxRetries = call.maxRetries ?? this.maxRetries;
    const timeout = call.timeout ?? this.timeout;
    for (let retry = 0; ; retry++) {
      const deadline = new Deadline(call.signal, timeout);
      let response: Response;
      let text: string;
      try {
        response = await this.#fetch(url, { method, headers, body, signal: deadline.signal });
        text = await response.text();
      } catch (error) {
        if (call.signal?.aborted) throw call.signal.reason;
        // A request that never connected never reached the API; any other may have been acted on.
        if (retry < maxRetries && (repeatable || (!deadline.timedOut && neverConnected(error)))) {
          await this.pause(retryDelayMs(retry, null, this.#random()), call.signal);
          continue;
        }
        throw deadline.timedOut
          ? new APITimeoutError(`${method} ${path}: no answer in ${timeout} ms`, { cause: error })
          : new APIConnectionError(`${method} ${path}: ${describe(error)}`, { cause: error });
      } finally {
        deadline.clear();
      }
      const status = response.status;
      if (status < 400) return (text ? parseJSON(text, `${method} ${path}`) : undefined) as T;
      const error = errorOf(response, text);
      // 429 and 503 are refusals (nothing was done); 502 and 504 may hide work done upstream. A spent budget
      // is a 429 that no wait short of its reset helps.
      const retriable =
        (status === 429 && !(error instanceof BudgetExceededError)) ||
        status === 503 ||
        ((status === 502 || status === 504) && repeatable);
      if (retriable && retry < maxRetries) {
        const after = retryAfterSeconds(response.headers);
        await this.pause(retryDelayMs(retry, after, this.#random()), call.signal);
        continue;
      }
      throw error;
    }
  }

  /** A listing at `path`: `await` it for the page at `query.cursor`, iterate it for every item from there. */
  list<T>(
    path: string,
    query: Record<string, QueryValue> & { cursor?: string },
    options?: RequestOptions,
  ): PagePromise<T> {
    const page = (cursor: string | undefined): Promise<Page<T>> =>
      this.request<{ data: T[]; next_cursor: string | null }>("GET", path, {
        ...options,
        query: { ...query, cursor },
      }).then((answer) => new Page(answer, page));
    return new PagePromise(() => page(query.cursor));
  }

  /** A GET of `url` (absolute, or relative to the API) whose body is read by the caller: not retried. An
   * error status throws the SDK's error for it. `deadline` governs the try: the caller resets it as pieces
   * arrive and clears it when done. */
  async open(url: string, deadline: Deadline, headers?: Record<string, string>): Promise<Response> {
    const absolute = this.url(url);
    let response: Response;
    try {
      response = await this.#fetch(absolute, {
        headers: this.headers(absolute, headers),
        signal: deadline.signal,
      });
    } catch (error) {
      throw this.#failure(error, deadline, `GET ${url}`);
    }
    if (response.status >= 400) {
      let text = "";
      try {
        text = await response.text();
      } catch {
        // the error status is what matters
      }
      throw errorOf(response, text);
    }
    return response;
  }

  /** The SDK's error for a failed read of a stream (or the caller's abort reason). */
  streamFailure(error: unknown, deadline: Deadline, what: string, outer?: AbortSignal): unknown {
    if (outer?.aborted) return outer.reason;
    return this.#failure(error, deadline, what);
  }

  #failure(error: unknown, deadline: Deadline, what: string): unknown {
    if (error instanceof VideogenError) return error;
    if (deadline.timedOut)
      return new APITimeoutError(`${what}: nothing came in ${deadline.ms} ms`, { cause: error });
    if (deadline.signal.aborted && !(deadline.signal.reason instanceof APITimeoutError))
      return deadline.signal.reason;
    return new APIConnectionError(`${what}: ${describe(error)}`, { cause: error });
  }

  /** Waits `ms`, unless `signal` is aborted first (then rejects with its reason). */
  async pause(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (!signal) return this.#sleep(ms);
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([this.#sleep(ms), aborted]);
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  }
}

function parseJSON(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new VideogenError(`${what}: the answer is not JSON`, { cause: error });
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${error.name}: ${error.message}${cause}`;
}

/** A fresh idempotency key: `sdk_` and 32 random hex digits. */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return "sdk_" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The Server-Sent Events of `response`'s body, each read within `deadline` (restarted for every piece);
 * the connection is closed when the caller stops iterating. */
export async function* readEvents(
  transport: Transport,
  response: Response,
  deadline: Deadline,
  what: string,
  outer?: AbortSignal,
): AsyncGenerator<ServerSentEvent, void, undefined> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = new EventParser();
  try {
    for (;;) {
      let piece: ReadableStreamReadResult<Uint8Array>;
      deadline.reset();
      try {
        piece = await reader.read();
      } catch (error) {
        throw transport.streamFailure(error, deadline, what, outer);
      } finally {
        deadline.stop();
      }
      if (piece.done) return;
      yield* parser.push(decoder.decode(piece.value, { stream: true }));
    }
  } finally {
    deadline.abort();
    reader.cancel().catch(() => undefined);
  }
}

/** `response`'s body, each piece read within `deadline`; cancelling it closes the connection. */
export function readBytes(
  transport: Transport,
  response: Response,
  deadline: Deadline,
  what: string,
  outer?: AbortSignal,
): ReadableStream<Uint8Array> {
  const body = response.body;
  if (!body) {
    deadline.clear();
    return new ReadableStream({ start: (controller) => controller.close() });
  }
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      deadline.reset();
      try {
        const piece = await reader.read();
        if (piece.done) {
          deadline.clear();
          controller.close();
        } else {
          controller.enqueue(piece.value);
        }
      } catch (error) {
        deadline.clear();
        controller.error(transport.streamFailure(error, deadline, what, outer));
      } finally {
        deadline.stop();
      }
    },
    async cancel(reason) {
      deadline.abort();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}
