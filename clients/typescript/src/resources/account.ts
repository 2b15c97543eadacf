/** `client.usage` and `client.auditEvents`: what the account made, and who changed its keys and webhooks. */
import type { PagePromise } from "../core/pagination.js";
import type { RequestOptions, Transport } from "../core/transport.js";
import type { AuditEvent, AuditEventListParams, Usage as UsageAnswer, UsageParams } from "../models.js";

export class Usage {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Generations and seconds of video by UTC day, provider and status over [start, end) (by default the last
   * 30 days), in total and per API key; `api_key_id`: only that key's. `start`/`end`: a `Date`, or ISO 8601
   * text (a day, `2026-11-01`, or a time with its zone). */
  get(params: UsageParams = {}, options?: RequestOptions): Promise<UsageAnswer> {
    return this.#t.request("GET", "usage", { ...options, query: params });
  }
}

export class AuditEvents {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Every change to the account's keys and webhooks that matches, newest first: `await` it for one page,
   * iterate it (`for await`) for every one, page after page. */
  list(params: AuditEventListParams = {}, options?: RequestOptions): PagePromise<AuditEvent> {
    return this.#t.list("audit-events", params, options);
  }
}
