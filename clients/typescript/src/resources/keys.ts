/** `client.apiKeys` and `client.budgets`: the account's own API keys (made with scopes, an expiry and budgets of
 * their own; the secret answered once), and the account's budgets with what is left of them. */
import type { PagePromise } from "../core/pagination.js";
import type { RequestOptions, Transport } from "../core/transport.js";
import type {
  ApiKey,
  ApiKeyCreateParams,
  ApiKeyCreated,
  ApiKeyListParams,
  ApiKeyUpdate,
  BudgetLimits,
  Budgets as BudgetState,
} from "../models.js";

const path = (id: string): string => `api-keys/${encodeURIComponent(id)}`;

export class ApiKeys {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Make a key holding `scopes` (at most those of the key making it); `secret` on the answer is the key
   * itself, shown this once. `budgets`: its own, e.g. `{ daily_video_seconds: 600 }`. */
  create(params: ApiKeyCreateParams, options?: RequestOptions): Promise<ApiKeyCreated> {
    const { expires_at } = params;
    const body = expires_at instanceof Date ? { ...params, expires_at: expires_at.toISOString() } : params;
    return this.#t.request("POST", "api-keys", { ...options, json: body });
  }

  /** Every key of the account, newest first (revoked ones too): `await` it for one page, iterate it
   * (`for await`) for every one, page after page. */
  list(params: ApiKeyListParams = {}, options?: RequestOptions): PagePromise<ApiKey> {
    return this.#t.list("api-keys", params, options);
  }

  get(id: string, options?: RequestOptions): Promise<ApiKey> {
    return this.#t.request("GET", path(id), options);
  }

  /** Rename it, or replace its own budgets (a budget left out has no limit). */
  update(id: string, params: ApiKeyUpdate, options?: RequestOptions): Promise<ApiKey> {
    return this.#t.request("PATCH", path(id), { ...options, json: params });
  }

  /** It stops working within seconds on every api replica (at once on the one answering); resolves to the
   * revoked key. */
  revoke(id: string, options?: RequestOptions): Promise<ApiKey> {
    return this.#t.request("DELETE", path(id), options);
  }
}

export class Budgets {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** The account's budgets, and what is left of each until when. */
  get(options?: RequestOptions): Promise<BudgetState> {
    return this.#t.request("GET", "budgets", options);
  }

  /** Replace the account's budgets: one left out (or null) has no limit. */
  set(params: BudgetLimits, options?: RequestOptions): Promise<BudgetState> {
    return this.#t.request("PUT", "budgets", { ...options, json: params });
  }
}
