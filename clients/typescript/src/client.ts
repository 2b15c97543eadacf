/** `new Videogen()`: the API's resources, over one transport with the SDK's retry policy. */
import { VideogenError } from "./core/errors.js";
import { type Fetch, type Sleep, Transport, defaultSleep } from "./core/transport.js";
import { AuditEvents, Events, Usage } from "./resources/account.js";
import { Generations } from "./resources/generations.js";
import { Batches } from "./resources/batches.js";
import { ApiKeys, Budgets } from "./resources/keys.js";
import { Models, Providers, Uploads } from "./resources/uploads.js";
import { Deliveries, Webhooks } from "./resources/webhooks.js";

export const VERSION = "0.1.0";
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1";
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 3;
const API_KEY_ENV = "VIDEOGEN_API_KEY";
const BASE_URL_ENV = "VIDEOGEN_BASE_URL";

export interface ClientOptions {
  /** Default: `VIDEOGEN_API_KEY` from the environment, where there is one (Node, Deno, Bun). */
  apiKey?: string;
  /** The API's base URL, ending in `/v1`. Default: `VIDEOGEN_BASE_URL`, else `http://127.0.0.1:8080/v1`. */
  baseURL?: string;
  /** Milliseconds a try may take until its answer is read, or a stream between two pieces (default 30 000). */
  timeout?: number;
  /** Tries after the first, where retrying is safe (default 3). */
  maxRetries?: number;
  /** A `fetch` of your own (a proxy's, an instrumented one); default: the platform's. */
  fetch?: Fetch;
  /** Waits between retries and reconnections (for tests). */
  sleep?: Sleep;
}

declare const Deno: { env: { get(name: string): string | undefined } } | undefined;
declare const process: { env: Record<string, string | undefined> } | undefined;

/** An environment variable, where the runtime has an environment (Node, Bun, Deno with --allow-env). */
function readEnv(name: string): string | undefined {
  try {
    if (typeof process !== "undefined" && process?.env) return process.env[name]?.trim() || undefined;
    if (typeof Deno !== "undefined") return Deno?.env.get(name)?.trim() || undefined;
  } catch {
    // Deno without permission to read it: as if unset
  }
  return undefined;
}

/**
 * The videogen API.
 *
 *     const client = new Videogen(); // VIDEOGEN_API_KEY, VIDEOGEN_BASE_URL
 *     const video = await client.generations.createAndWait({ prompt: "a red fox", provider: "mock", duration: 5 });
 *
 * Calls that fail to connect, are rate limited (429) or find the API unavailable (503) are retried up to
 * `maxRetries` times with exponential backoff and jitter, honouring `Retry-After`; read timeouts and 502/504
 * only where repeating is safe. The API key is sent to the API's own origin only.
 */
export class Videogen {
  readonly baseURL: string;
  readonly generations: Generations;
  readonly uploads: Uploads;
  readonly providers: Providers;
  readonly models: Models;
  readonly webhooks: Webhooks;
  readonly deliveries: Deliveries;
  readonly usage: Usage;
  readonly auditEvents: AuditEvents;
  readonly events: Events;
  readonly apiKeys: ApiKeys;
  readonly budgets: Budgets;
  readonly batches: Batches;

  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? readEnv(API_KEY_ENV);
    if (!apiKey) throw new VideogenError(`no API key: pass apiKey or set ${API_KEY_ENV}`);
    const fetch = options.fetch ?? globalThis.fetch;
    if (typeof fetch !== "function") throw new VideogenError("no fetch here: pass one as the fetch option");
    const transport = new Transport({
      apiKey,
      baseURL: options.baseURL ?? readEnv(BASE_URL_ENV) ?? DEFAULT_BASE_URL,
      timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      fetch: (input, init) => fetch(input, init),
      sleep: options.sleep ?? defaultSleep,
      random: Math.random,
    });
    this.baseURL = transport.baseURL;
    this.uploads = new Uploads(transport);
    this.generations = new Generations(transport, this.uploads);
    this.providers = new Providers(transport);
    this.models = new Models(transport);
    this.webhooks = new Webhooks(transport);
    this.deliveries = new Deliveries(transport);
    this.usage = new Usage(transport);
    this.auditEvents = new AuditEvents(transport);
    this.events = new Events(transport);
    this.apiKeys = new ApiKeys(transport);
    this.budgets = new Budgets(transport);
    this.batches = new Batches(transport);
  }
}
