/** `client.batches`: many generations submitted in one call, watched as one object; its items, a wait with
 * progress, and its results file (JSONL, one outcome per item) read line by line as it streams. */
import { BatchWaitTimeoutError } from "../core/errors.js";
import type { PagePromise } from "../core/pagination.js";
import {
  Deadline,
  IDEMPOTENCY_KEY,
  newIdempotencyKey,
  type RequestOptions,
  type Transport,
} from "../core/transport.js";
import type {
  Batch,
  BatchCancel,
  BatchGeneration,
  BatchGenerationListParams,
  BatchItemParams,
  BatchListParams,
  BatchRequest,
  BatchResult,
} from "../models.js";

const path = (id: string): string => `batches/${encodeURIComponent(id)}`;

/** The statuses a batch ends in: every item has ended (`completed`, `canceled`), or its acceptance was cut
 * short before any item was written (`failed`). */
export const BATCH_FINISHED_STATUSES: ReadonlySet<string> = new Set(["completed", "canceled", "failed"]);

/** Whether the batch has ended; an unknown status is not. */
export function isBatchFinished(batch: Pick<Batch, "status">): boolean {
  return BATCH_FINISHED_STATUSES.has(batch.status);
}

export interface BatchCreateOptions extends RequestOptions {
  /** Your keys and values, kept on the batch. */
  metadata?: Record<string, string>;
  /** `"refuse"` (the default): one invalid item refuses the batch (`ValidationError`, its `problem.items`
   * listing them by index); `"skip"`: the valid ones are accepted, the others listed in `refused`. */
  on_invalid?: "refuse" | "skip";
  /** `false`: no `video.*` webhook per item, only `batch.completed`. */
  item_events?: boolean;
  /** A re-send under the same key answers the same batch; by default a key is made for the call and used by
   * every try, so a retry never makes a second batch. */
  idempotencyKey?: string;
}

export interface BatchWaitOptions {
  /** Told the batch at each read (its `counts` move as items end), the last one finished. */
  onProgress?: (batch: Batch) => void;
  /** Milliseconds between two reads (default 2000: the Python SDK's `poll_interval=2`). */
  pollInterval?: number;
  /** Milliseconds to wait in all; then `BatchWaitTimeoutError` (an `APITimeoutError`). Default: no limit. */
  timeout?: number;
  signal?: AbortSignal;
}

export interface BatchResultsOptions {
  signal?: AbortSignal;
}

export const DEFAULT_BATCH_POLL_INTERVAL_MS = 2000;

export class Batches {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Submit up to 10,000 items, each what `generations.create` takes (`prompt`, `provider`, `duration`…)
   * with an optional `custom_id` (unique within the batch). Items are low priority unless they say.
   *
   *     const batch = await client.batches.create(prompts.map((prompt, i) => ({ prompt, provider: "mock",
   *       duration: 5, custom_id: `p${i}` })), { metadata: { job: "nightly" } });
   *
   * A whole request body (`{ items, metadata, on_invalid, item_events }`) is taken too. */
  create(items: readonly BatchItemParams[] | BatchRequest, options: BatchCreateOptions = {}): Promise<Batch> {
    const { metadata, on_invalid, item_events, idempotencyKey, ...request } = options;
    const body: BatchRequest = isItems(items) ? { items: [...items] } : { ...items };
    if (metadata !== undefined) body.metadata = metadata;
    if (on_invalid !== undefined) body.on_invalid = on_invalid;
    if (item_events !== undefined) body.item_events = item_events;
    const headers = { ...request.headers, [IDEMPOTENCY_KEY]: idempotencyKey ?? newIdempotencyKey() };
    return this.#t.request("POST", "batches", { ...request, headers, json: body });
  }

  /** The batch: its status, counts by state, cost. */
  retrieve(id: string, options?: RequestOptions): Promise<Batch> {
    return this.#t.request("GET", path(id), options);
  }

  /** `retrieve`, by the name the other resources use. */
  get(id: string, options?: RequestOptions): Promise<Batch> {
    return this.retrieve(id, options);
  }

  /** The account's batches, newest first: `await` it for one page, iterate it for every one. */
  list(params: BatchListParams = {}, options?: RequestOptions): PagePromise<Batch> {
    return this.#t.list("batches", params, options);
  }

  /** The batch's items' generations in the order given, filtered by `status` (one or several) and
   * `custom_id`: `await` it for one page (`limit` long, from `cursor`), iterate it for every match. */
  generations(
    id: string,
    params: BatchGenerationListParams = {},
    options?: RequestOptions,
  ): PagePromise<BatchGeneration> {
    return this.#t.list(`${path(id)}/generations`, params, options);
  }

  /** Cancel every item that has not started; `not_canceled` lists those left to finish. A finished batch is
   * a `ConflictError`. */
  cancel(id: string, options?: RequestOptions): Promise<BatchCancel> {
    return this.#t.request("POST", `${path(id)}/cancel`, options);
  }

  /** The batch once it has ended (`completed`, `canceled` or `failed`), read every `pollInterval` ms;
   * `onProgress(batch)` is told of each read. As the Python SDK's `wait`: a fixed interval, the deadline
   * checked after each read (`BatchWaitTimeoutError`, carrying the last batch read, once `timeout` ms have
   * passed), the signal's reason if `signal` is aborted. The batch goes on either way. */
  async wait(id: string, options: BatchWaitOptions = {}): Promise<Batch> {
    const interval = options.pollInterval ?? DEFAULT_BATCH_POLL_INTERVAL_MS;
    const started = Date.now();
    for (;;) {
      const batch = await this.retrieve(id, options.signal ? { signal: options.signal } : {});
      options.onProgress?.(batch);
      if (isBatchFinished(batch)) return batch;
      if (options.timeout !== undefined && Date.now() - started >= options.timeout) {
        throw new BatchWaitTimeoutError(batch, options.timeout);
      }
      await this.#t.pause(interval, options.signal);
    }
  }

  /** Every item's outcome from the batch's results file, in the order given, parsed line by line as the
   * file streams (10,000 lines are never held at once):
   *
   *     for await (const result of client.batches.results(batch.id)) console.log(result.custom_id, result.status);
   *
   * For an unfinished batch, its unfinished items show their status now. Leaving the loop closes the
   * connection. */
  async *results(
    id: string,
    options: BatchResultsOptions = {},
  ): AsyncGenerator<BatchResult, void, undefined> {
    for await (const line of this.resultsLines(id, options)) yield JSON.parse(line) as BatchResult;
  }

  /** The batch's results file, line by line as the API wrote it (one JSON object per line, blank lines
   * skipped): to write it to a file as it comes. */
  async *resultsLines(
    id: string,
    options: BatchResultsOptions = {},
  ): AsyncGenerator<string, void, undefined> {
    const what = `GET ${path(id)}/results`;
    const deadline = new Deadline(options.signal, this.#t.timeout);
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      const response = await this.#t.open(`${path(id)}/results`, deadline);
      if (!response.body) return;
      reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        let piece: ReadableStreamReadResult<Uint8Array>;
        deadline.reset();
        try {
          piece = await reader.read();
        } catch (error) {
          throw this.#t.streamFailure(error, deadline, what, options.signal);
        } finally {
          deadline.stop();
        }
        if (piece.done) break;
        buffer += decoder.decode(piece.value, { stream: true });
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const line of lines) if (line.trim() !== "") yield line.replace(/\r$/, "");
      }
      buffer += decoder.decode();
      if (buffer.trim() !== "") yield buffer;
    } finally {
      deadline.abort();
      reader?.cancel().catch(() => undefined);
    }
  }
}

function isItems(value: readonly BatchItemParams[] | BatchRequest): value is readonly BatchItemParams[] {
  return Array.isArray(value);
}
