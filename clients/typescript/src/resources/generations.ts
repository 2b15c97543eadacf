/** `client.generations`: create, read, list, cancel, delete, follow, wait for and download generations. */
import {
  APIConnectionError,
  GenerationFailedError,
  RateLimitError,
  VideogenError,
  WaitTimeoutError,
} from "../core/errors.js";
import type { PagePromise } from "../core/pagination.js";
import {
  Deadline,
  IDEMPOTENCY_KEY,
  newIdempotencyKey,
  readBytes,
  readEvents,
  type RequestOptions,
  type Transport,
} from "../core/transport.js";
import type { GenerateRequest, Generation, GenerationListParams, ImageInput } from "../models.js";
import { isTerminal } from "../models.js";
import { type UploadSource, Uploads, isUploadSource } from "./uploads.js";

/** A first frame: an `https://` URL, an upload's id (`upl_…`), `{ url }` or `{ upload_id }`, or the image
 * itself (a `Blob`/`File`, bytes, or a stream of bytes), uploaded first. */
export type ImageSource = string | ImageInput | UploadSource;

export type GenerationCreateParams = Omit<GenerateRequest, "image"> & { image?: ImageSource | null };

export interface CreateOptions extends RequestOptions {
  /** Makes retries across processes safe too; by default a key is made for the call and used by every try. */
  idempotencyKey?: string;
}

export interface WaitOptions {
  /** Milliseconds to wait in all (default 600 000: ten minutes); then `WaitTimeoutError`. */
  timeout?: number;
  signal?: AbortSignal;
  /** Told each change seen (of status or progress). */
  onProgress?: (generation: Generation) => void;
}

export interface CreateAndWaitOptions extends WaitOptions {
  idempotencyKey?: string;
}

export interface EventsOptions {
  /** Resume after this event (an id from an earlier stream): only newer changes come. */
  lastEventId?: string;
  signal?: AbortSignal;
}

/** One change of a generation, from its event stream. */
export interface GenerationEvent {
  /** The event's id: pass as `lastEventId` to resume after it. */
  id: string;
  generation: Generation;
}

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Told the bytes written so far after each piece, and the total if the server said (Content-Length). */
  onProgress?: (done: number, total: number | null) => void;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 600_000;
const MAX_PREFER_WAIT_S = 60; // the most the API waits for one request
const FIRST_PAUSE_MS = 500;
const MAX_PAUSE_MS = 5000;

export class Generations {
  readonly #t: Transport;
  readonly #uploads: Uploads;

  constructor(transport: Transport, uploads: Uploads) {
    this.#t = transport;
    this.#uploads = uploads;
  }

  /** Submit a generation; it is durably stored when this resolves. The call carries an `Idempotency-Key`
   * (one made here unless given), reused by every retry of it, so a retry never makes a second generation.
   * What each provider can make (aspect ratios, resolutions, seed, …): `client.providers.list()`; its models,
   * one of which `model` may name: `client.models.list()`. */
  async create(params: GenerationCreateParams, options: CreateOptions = {}): Promise<Generation> {
    const { idempotencyKey, ...call } = options;
    const { image, ...fields } = params;
    const body: GenerateRequest = { ...fields };
    if (image !== undefined) body.image = image === null ? null : await this.#image(image, call);
    return this.#t.request("POST", "generate", {
      ...call,
      json: body,
      headers: { ...call.headers, [IDEMPOTENCY_KEY]: idempotencyKey ?? newIdempotencyKey() },
    });
  }

  async #image(image: ImageSource, options: RequestOptions): Promise<ImageInput> {
    if (typeof image === "string") {
      if (/^https?:\/\//.test(image)) return { url: image };
      if (image.startsWith("upl_")) return { upload_id: image };
      throw new VideogenError(`image: a URL, an upload id (upl_…) or a file, not ${JSON.stringify(image)}`);
    }
    if (isUploadSource(image)) return { upload_id: (await this.#uploads.create(image, options)).id };
    return image;
  }

  get(id: string, options?: RequestOptions): Promise<Generation> {
    return this.#t.request("GET", `generations/${encodeURIComponent(id)}`, options);
  }

  /** The account's generations that match, newest first. `await` it for one page (`limit` long, from
   * `cursor`); iterate it (`for await`) for every match, page after page. `metadata`: only those whose
   * metadata has each of these values. */
  list(params: GenerationListParams = {}, options?: RequestOptions): PagePromise<Generation> {
    return this.#t.list("generations", params, options);
  }

  /** Cancel an unfinished generation (a finished one: `ConflictError`). */
  cancel(id: string, options?: RequestOptions): Promise<Generation> {
    return this.#t.request("POST", `generations/${encodeURIComponent(id)}/cancel`, options);
  }

  /** Delete the generation: its video, thumbnail and first frame are deleted from storage (its links answer
   * 410), its prompt, negative prompt, metadata and image erased; an unfinished one is canceled first. `get`
   * still answers it as a tombstone (`deleted: true`); lists leave it out; usage still counts it. Deleting
   * it again is not an error. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.#t.request("DELETE", `generations/${encodeURIComponent(id)}`, options);
  }

  /** The generation's changes as they happen (Server-Sent Events): the generation as it is, then one event
   * per change of status or progress, ending after it is completed or failed. A dropped connection is
   * resumed where it left off (`Last-Event-ID`), after a pause of 0.5 s doubling to 5 s; it gives up after
   * the client's `maxRetries` failed reconnections in a row (`APIConnectionError`). */
  async *events(id: string, options: EventsOptions = {}): AsyncGenerator<GenerationEvent, void, undefined> {
    let lastEventId = options.lastEventId;
    let pause = FIRST_PAUSE_MS;
    let failures = 0;
    for (;;) {
      let failure: APIConnectionError;
      try {
        let fresh = false;
        for await (const event of this.#stream(id, lastEventId, options.signal)) {
          fresh = true;
          failures = 0;
          pause = FIRST_PAUSE_MS;
          lastEventId = event.id;
          yield event;
          if (isTerminal(event.generation)) return;
        }
        // The stream ended before the generation did (an api replica shutting down): resume at once.
        if (fresh) continue;
        failure = new APIConnectionError(`GET generations/${id}/events: the stream ended with nothing new`);
      } catch (error) {
        if (!(error instanceof APIConnectionError)) throw error;
        failure = error;
      }
      if (++failures > this.#t.maxRetries) throw failure;
      await this.#t.pause(pause, options.signal);
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    }
  }

  /** One connection to the generation's event stream: its `generation` events, after `lastEventId`. */
  async *#stream(
    id: string,
    lastEventId: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<GenerationEvent, void, undefined> {
    const path = `generations/${encodeURIComponent(id)}/events`;
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    if (lastEventId) headers["Last-Event-ID"] = lastEventId;
    const deadline = new Deadline(signal, this.#t.timeout);
    let response: Response;
    try {
      response = await this.#t.open(path, deadline, headers);
    } catch (error) {
      deadline.clear();
      throw error;
    }
    for await (const event of readEvents(this.#t, response, deadline, `GET ${path}`, signal)) {
      if (event.event !== "generation") continue;
      yield { id: event.id, generation: JSON.parse(event.data) as Generation };
    }
  }

  /** Follow the generation until it is finished and resolve to it `completed`. Rejects with
   * `GenerationFailedError` if it failed (or was cancelled), `WaitTimeoutError` after `timeout` ms, and the
   * signal's reason if `signal` is aborted. The generation goes on either way.
   *
   * Follows the generation's event stream, resumed after a dropped connection; where the API refuses a
   * stream (the account holds too many open) it asks with `Prefer: wait` instead: each request answers when
   * the generation finishes or after up to 25 s. */
  async wait(id: string, options: WaitOptions = {}): Promise<Generation> {
    const timeout = options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS;
    const started = Date.now();
    const left = (): number => timeout - (Date.now() - started);
    const deadline = new Deadline(options.signal, timeout);
    const follower = new Follower(options.onProgress);
    let streaming = true;
    let lastEventId: string | undefined;
    let pause = FIRST_PAUSE_MS;
    try {
      while (left() > 0) {
        try {
          if (!streaming) {
            if (follower.see(await this.#getWaiting(id, left(), deadline.signal))) return follower.finished();
            continue;
          }
          let fresh = false;
          for await (const event of this.#stream(id, lastEventId, deadline.signal)) {
            lastEventId = event.id;
            if (follower.see(event.generation)) return follower.finished();
            fresh = true;
            pause = FIRST_PAUSE_MS;
          }
          // The stream ended before the generation did (an api replica shutting down): resume at once if it
          // brought news, else after a pause.
          if (!fresh) {
            await this.#t.pause(Math.min(pause, Math.max(0, left())), deadline.signal);
            pause = Math.min(pause * 2, MAX_PAUSE_MS);
          }
        } catch (error) {
          if (deadline.timedOut) break;
          if (options.signal?.aborted) throw options.signal.reason;
          if (error instanceof RateLimitError) {
            if (error.type.endsWith(":too-many-streams")) {
              streaming = false;
              continue;
            }
            await this.#t.pause(
              Math.min(error.retryAfter !== null ? error.retryAfter * 1000 : pause, left()),
              deadline.signal,
            );
          } else if (error instanceof APIConnectionError) {
            await this.#t.pause(Math.min(pause, Math.max(0, left())), deadline.signal);
            pause = Math.min(pause * 2, MAX_PAUSE_MS);
          } else {
            throw error;
          }
        }
      }
    } catch (error) {
      if (!deadline.timedOut || error instanceof GenerationFailedError) throw error;
    } finally {
      deadline.clear();
    }
    throw new WaitTimeoutError(follower.latest ?? (await this.get(id)), timeout);
  }

  /** The generation once it is finished, or as it is after up to `Prefer: wait` seconds: less than what is
   * left of the wait, and than the client's timeout. */
  #getWaiting(id: string, leftMs: number, signal: AbortSignal): Promise<Generation> {
    const seconds = Math.max(
      1,
      Math.floor(Math.min(leftMs / 1000, MAX_PREFER_WAIT_S, this.#t.timeout / 1000 - 5)),
    );
    return this.get(id, { signal, headers: { Prefer: `wait=${seconds}` } });
  }

  /** `create`, then `wait`: the generation, completed. `onProgress` is told of the new generation too. */
  async createAndWait(
    params: GenerationCreateParams,
    options: CreateAndWaitOptions = {},
  ): Promise<Generation> {
    const { idempotencyKey, ...wait } = options;
    const create: CreateOptions = {};
    if (idempotencyKey !== undefined) create.idempotencyKey = idempotencyKey;
    if (wait.signal !== undefined) create.signal = wait.signal;
    const generation = await this.create(params, create);
    options.onProgress?.(generation);
    return this.wait(generation.id, wait);
  }

  /** The completed generation's video, as a stream of bytes (cancel it to stop early). */
  async download(
    id: string,
    options: Omit<DownloadOptions, "onProgress"> = {},
  ): Promise<ReadableStream<Uint8Array>> {
    return (await this.#video(id, options.signal)).body;
  }

  /** Write the completed generation's video to the file at `path` (Node, Deno and Bun); resolves to the bytes
   * written. A download that fails leaves no file behind. */
  async downloadToFile(id: string, path: string, options: DownloadOptions = {}): Promise<number> {
    const fs = await fileSystem();
    const { body, total } = await this.#video(id, options.signal);
    const reader = body.getReader();
    const file = await fs.open(path, "w");
    let done = 0;
    try {
      for (;;) {
        const piece = await reader.read();
        if (piece.done) break;
        for (let offset = 0; offset < piece.value.byteLength;) {
          offset += (await file.write(piece.value, offset, piece.value.byteLength - offset)).bytesWritten;
        }
        done += piece.value.byteLength;
        options.onProgress?.(done, total);
      }
    } catch (error) {
      await reader.cancel().catch(() => undefined);
      await file.close();
      await fs.rm(path, { force: true });
      throw error;
    }
    await file.close();
    return done;
  }

  async #video(
    id: string,
    signal: AbortSignal | undefined,
  ): Promise<{ body: ReadableStream<Uint8Array>; total: number | null }> {
    const generation = await this.get(id, signal ? { signal } : {});
    if (!generation.video_url) {
      throw new VideogenError(`generation ${id} has no video (status ${generation.status})`);
    }
    const deadline = new Deadline(signal, this.#t.timeout);
    let response: Response;
    try {
      response = await this.#t.open(generation.video_url, deadline);
    } catch (error) {
      deadline.clear();
      throw error;
    }
    const length = response.headers.get("content-length");
    const total = length !== null && /^\d+$/.test(length) ? Number(length) : null;
    return { body: readBytes(this.#t, response, deadline, `downloading ${id}`, signal), total };
  }
}

/** What a wait has seen of a generation: tells `onProgress` of each change; says when it is over. */
class Follower {
  latest: Generation | undefined;
  readonly #onProgress: ((generation: Generation) => void) | undefined;

  constructor(onProgress: ((generation: Generation) => void) | undefined) {
    this.#onProgress = onProgress;
  }

  /** True once `generation` is finished. */
  see(generation: Generation): boolean {
    const seen = this.latest;
    const changed =
      seen === undefined ||
      seen.status !== generation.status ||
      seen.progress !== generation.progress ||
      seen.updated_at !== generation.updated_at;
    this.latest = generation;
    if (changed) this.#onProgress?.(generation);
    return isTerminal(generation);
  }

  /** The finished generation if completed; throws `GenerationFailedError` if it failed. */
  finished(): Generation {
    const generation = this.latest as Generation;
    if (generation.status === "failed") throw new GenerationFailedError(generation);
    return generation;
  }
}

interface FileHandle {
  write(data: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>;
  close(): Promise<void>;
}

interface FileSystem {
  open(path: string, flags: string): Promise<FileHandle>;
  rm(path: string, options: { force: boolean }): Promise<void>;
}

/** Node's `fs/promises` (which Deno and Bun provide too), loaded only when a file is written, so the SDK
 * loads unchanged where there is none (a browser, an edge runtime). */
async function fileSystem(): Promise<FileSystem> {
  const name = "node:fs/promises"; // not a literal import: bundlers leave it alone
  try {
    return (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as FileSystem;
  } catch (error) {
    throw new VideogenError("downloadToFile needs a file system (Node, Deno or Bun): use download() here", {
      cause: error,
    });
  }
}
