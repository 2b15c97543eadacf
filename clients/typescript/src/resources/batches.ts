/** `client.batches`: many generations submitted in one call, watched as one object; its items and its
 * results file (JSONL, one outcome per item). */
import type { PagePromise } from "../core/pagination.js";
import { Deadline, type RequestOptions, type Transport } from "../core/transport.js";
import type {
  Batch,
  BatchCancel,
  BatchGeneration,
  BatchGenerationListParams,
  BatchListParams,
  BatchRequest,
  BatchResult,
} from "../models.js";

const path = (id: string): string => `batches/${encodeURIComponent(id)}`;

export class Batches {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Submit up to 10,000 items (each the body of `generations.create`, with an optional `custom_id`). */
  create(params: BatchRequest, options?: RequestOptions): Promise<Batch> {
    return this.#t.request("POST", "batches", { ...options, json: params });
  }

  get(id: string, options?: RequestOptions): Promise<Batch> {
    return this.#t.request("GET", path(id), options);
  }

  /** The account's batches, newest first: `await` it for one page, iterate it for every one. */
  list(params: BatchListParams = {}, options?: RequestOptions): PagePromise<Batch> {
    return this.#t.list("batches", params, options);
  }

  /** The batch's items' generations in the order given, filtered by status and custom_id. */
  generations(
    id: string,
    params: BatchGenerationListParams = {},
    options?: RequestOptions,
  ): PagePromise<BatchGeneration> {
    return this.#t.list(`${path(id)}/generations`, params, options);
  }

  /** Cancel every item that has not started; `not_canceled` lists those left to finish. */
  cancel(id: string, options?: RequestOptions): Promise<BatchCancel> {
    return this.#t.request("POST", `${path(id)}/cancel`, options);
  }

  /** Every item's outcome, from the batch's results file. */
  async results(id: string, options: { signal?: AbortSignal } = {}): Promise<BatchResult[]> {
    const deadline = new Deadline(options.signal, this.#t.timeout);
    try {
      const response = await this.#t.open(`${path(id)}/results`, deadline);
      const text = await response.text();
      return text
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as BatchResult);
    } finally {
      deadline.clear();
    }
  }
}
