/** `client.webhooks` and `client.deliveries`: register endpoints, change them, rotate their secrets, test
 * them, read and recover their deliveries; and check a delivery's signatures. */
import type { PagePromise } from "../core/pagination.js";
import type { RequestOptions, Transport } from "../core/transport.js";
import type {
  Delivery,
  DeliveryListParams,
  Moment,
  Recovered,
  RotatedSecret,
  Webhook,
  WebhookCreate,
  WebhookCreated,
  WebhookList,
  WebhookUpdate,
} from "../models.js";
import {
  type HeadersLike,
  type Payload,
  type VerifyOptions,
  type WebhookEvent,
  unwrap,
  verify,
} from "../webhooks.js";

const path = (id: string, tail = ""): string => `webhooks/${encodeURIComponent(id)}${tail}`;

export class Webhooks {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Register an endpoint; the answer carries its signing secret, shown this once. */
  create(params: WebhookCreate, options?: RequestOptions): Promise<WebhookCreated> {
    return this.#t.request("POST", "webhooks", { ...options, json: params });
  }

  async list(options?: RequestOptions): Promise<Webhook[]> {
    return (await this.#t.request<WebhookList>("GET", "webhooks", options)).data;
  }

  get(id: string, options?: RequestOptions): Promise<Webhook> {
    return this.#t.request("GET", path(id), options);
  }

  /** Change what is given; `active: true` re-enables an endpoint the service disabled. */
  update(id: string, params: WebhookUpdate, options?: RequestOptions): Promise<Webhook> {
    return this.#t.request("PATCH", path(id), { ...options, json: params });
  }

  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.#t.request("DELETE", path(id), options);
  }

  /** A new signing secret (shown this once); deliveries are signed with both for the overlap. */
  rotateSecret(id: string, options?: RequestOptions): Promise<RotatedSecret> {
    return this.#t.request("POST", path(id, "/rotate-secret"), options);
  }

  /** Send the endpoint a test event now; the answer is its delivery, to follow with `deliveries.get`. */
  sendTest(id: string, options?: RequestOptions): Promise<Delivery> {
    return this.#t.request("POST", path(id, "/test"), options);
  }

  /** Queue again the endpoint's failed deliveries created since `since`; resolves to how many. */
  async recover(id: string, params: { since: Moment }, options?: RequestOptions): Promise<number> {
    const since = params.since instanceof Date ? params.since.toISOString() : params.since;
    const answer = await this.#t.request<Recovered>("POST", path(id, "/recover"), {
      ...options,
      json: { since },
    });
    return answer.requeued;
  }

  /** The endpoint's deliveries that match, newest first: `await` it for one page, iterate it (`for await`)
   * for every one, page after page. */
  deliveries(id: string, params: DeliveryListParams = {}, options?: RequestOptions): PagePromise<Delivery> {
    return this.#t.list(path(id, "/deliveries"), params, options);
  }

  /** Check a delivery's signatures and timestamp (see `verify` in `@videogen/client/webhooks`). */
  verify(
    payload: Payload,
    headers: HeadersLike,
    secret: string,
    options?: VerifyOptions,
  ): Promise<Record<string, unknown>> {
    return verify(payload, headers, secret, options);
  }

  /** `verify`, then the payload as a typed event. */
  unwrap(
    payload: Payload,
    headers: HeadersLike,
    secret: string,
    options?: VerifyOptions,
  ): Promise<WebhookEvent> {
    return unwrap(payload, headers, secret, options);
  }
}

export class Deliveries {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** One delivery, with its attempts. */
  get(id: string, options?: RequestOptions): Promise<Delivery> {
    return this.#t.request("GET", `deliveries/${encodeURIComponent(id)}`, options);
  }

  /** Send a failed delivery again now. */
  retry(id: string, options?: RequestOptions): Promise<Delivery> {
    return this.#t.request("POST", `deliveries/${encodeURIComponent(id)}/retry`, options);
  }
}
