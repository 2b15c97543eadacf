/**
 * Every error the SDK throws derives from `VideogenError`. An answer with an error status becomes the
 * subclass for its status, carrying the problem document's fields and the request id to quote to support.
 */
import type {
  Batch,
  BudgetProblem,
  FieldError,
  Generation,
  Problem,
  Scope,
  ScopeProblem,
} from "../models.js";

export class VideogenError extends Error {
  override name = "VideogenError";
}

/** The API could not be reached, or the connection broke before an answer came. */
export class APIConnectionError extends VideogenError {
  override name = "APIConnectionError";
}

/** No answer (or, on a stream, no byte) within the client's timeout. */
export class APITimeoutError extends APIConnectionError {
  override name = "APITimeoutError";
}

/** The API answered with an error status (4xx/5xx); `problem` is its `application/problem+json` body. */
export class APIError extends VideogenError {
  override name = "APIError";
  readonly status: number;
  readonly problem: Problem;
  /** The problem's type, a URN such as `urn:videogen:problem:not-found` (or `about:blank`). */
  readonly type: string;
  readonly title: string;
  readonly detail: string | null;
  /** The answer's `X-Request-Id`: quote it when asking about a request. */
  readonly requestId: string | null;

  constructor(status: number, problem: Problem, requestId: string | null) {
    let message = `${status} ${problem.title || "error"}`;
    if (problem.detail) message += `: ${problem.detail}`;
    if (requestId) message += ` (request ${requestId})`;
    super(message);
    this.status = status;
    this.problem = problem;
    this.type = problem.type ?? "about:blank";
    this.title = problem.title ?? "";
    this.detail = problem.detail ?? null;
    this.requestId = requestId;
  }
}

/** The Python SDK's name for `APIError`. */
export { APIError as APIStatusError };

/** 400, 413, 415: the request could not be read. */
export class BadRequestError extends APIError {
  override name = "BadRequestError";
}

/** 401: no API key, or one the API does not know. */
export class AuthenticationError extends APIError {
  override name = "AuthenticationError";
}

/** 403: the API key does not hold the scope the request needs (`scope`); nothing was done. */
export class PermissionDeniedError extends APIError {
  override name = "PermissionDeniedError";
  /** The scope the request needed; null if the answer did not say (an error from a proxy). */
  get scope(): Scope | null {
    const scope = (this.problem as Partial<ScopeProblem>).scope;
    return typeof scope === "string" ? scope : null;
  }
}

/** 404: no such resource in this account. */
export class NotFoundError extends APIError {
  override name = "NotFoundError";
}

/** 409: the resource's state does not allow it (e.g. cancelling a finished generation). */
export class ConflictError extends APIError {
  override name = "ConflictError";
}

/** 422: a field, parameter or header is invalid; `errors` names each. */
export class ValidationError extends APIError {
  override name = "ValidationError";
  get errors(): FieldError[] {
    return this.problem.errors ?? [];
  }
}

/** 429: over the account's rate or its limit of generations in flight; `retryAfter` in seconds. */
export class RateLimitError extends APIError {
  override name = "RateLimitError";
  readonly retryAfter: number | null;

  constructor(status: number, problem: Problem, requestId: string | null, retryAfter: number | null) {
    super(status, problem, requestId);
    this.retryAfter = retryAfter;
  }
}

export const BUDGET_EXCEEDED = "urn:videogen:problem:budget-exceeded";

/** 429 budget-exceeded: the generation would pass a budget; `budget` says which, whose, what is left and when
 * it resets. Not retried: waiting seconds does not help before `budget.resets_at`. */
export class BudgetExceededError extends RateLimitError {
  override name = "BudgetExceededError";
  /** The problem document: `budget` (which), `api_key_id` (whose; null: the account's), `limit`, `used`,
   * `remaining`, `requested` and `resets_at`. */
  get budget(): BudgetProblem {
    return this.problem as BudgetProblem;
  }
}

/** 5xx: the API failed or is unavailable. */
export class InternalServerError extends APIError {
  override name = "InternalServerError";
}

/** A generation that was waited for ended `failed` (cancelled included); `generation.error` says why. */
export class GenerationFailedError extends VideogenError {
  override name = "GenerationFailedError";
  readonly generation: Generation;

  constructor(generation: Generation) {
    const error = generation.error;
    const reason = error ? `${error.code}: ${error.message}` : "no reason given";
    super(`generation ${generation.id} failed (${reason})`);
    this.generation = generation;
  }
}

/** A wait ran out of time before the generation finished; `generation` is its last state seen. */
export class WaitTimeoutError extends VideogenError {
  override name = "WaitTimeoutError";
  readonly generation: Generation;

  constructor(generation: Generation, timeoutMs: number) {
    super(`generation ${generation.id} still ${generation.status} after ${timeoutMs / 1000} s`);
    this.generation = generation;
  }
}

/** `batches.wait` ran out of time before the batch ended; `batch` is the last read of it. An
 * `APITimeoutError`, as the Python SDK's `batches.wait` raises. */
export class BatchWaitTimeoutError extends APITimeoutError {
  override name = "BatchWaitTimeoutError";
  readonly batch: Batch;

  constructor(batch: Batch, timeoutMs: number) {
    super(`batch ${batch.id} not finished after ${timeoutMs / 1000} s (still ${batch.status})`);
    this.batch = batch;
  }
}

const BY_STATUS: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: BadRequestError,
  415: BadRequestError,
  422: ValidationError,
};

export function statusError(
  status: number,
  problem: Problem,
  requestId: string | null,
  retryAfter: number | null,
): APIError {
  if (status === 429) {
    const Kind = problem.type === BUDGET_EXCEEDED ? BudgetExceededError : RateLimitError;
    return new Kind(status, problem, requestId, retryAfter);
  }
  if (status >= 500) return new InternalServerError(status, problem, requestId);
  const Kind = BY_STATUS[status] ?? APIError;
  return new Kind(status, problem, requestId);
}
