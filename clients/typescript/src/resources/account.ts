/** `client.usage`, `client.auditEvents` and `client.events`: what the account made, who changed its keys and
 * webhooks, and what happened on it as its webhooks deliver it. */
import type { PagePromise } from "../core/pagination.js";
import type { RequestOptions, Transport } from "../core/transport.js";
import type {
  AuditEvent,
  AuditEventListParams,
  Event,
  EventListParams,
  Usage as UsageAnswer,
  UsageParams,
} from "../models.js";

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

export class Events {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** One event: what happened, to what, and the data its deliveries carried (a delivery's `event_id`). */
  get(id: string, options?: RequestOptions): Promise<Event> {
    return this.#t.request("GET", `events/${encodeURIComponent(id)}`, options);
  }

  /** The account's events that match (of these types; about this generation, endpoint or account), newest
   * first: `await` it for one page, iterate it (`for await`) for every one, page after page. */
  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<Event> {
    return this.#t.list("events", params, options);
  }
}
