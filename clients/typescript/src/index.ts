/**
 * The TypeScript SDK for the videogen API: ESM, typed end to end, no runtime dependencies (the platform's
 * `fetch`, streams, `AbortSignal` and Web Crypto), for Node ≥ 20, Deno, Bun, browsers and edge runtimes.
 *
 *     import { Videogen } from "@videogen/client";
 *
 *     const client = new Videogen(); // VIDEOGEN_API_KEY, VIDEOGEN_BASE_URL
 *     const video = await client.generations.createAndWait({ prompt: "a red fox in snow", provider: "mock", duration: 5 });
 *     await client.generations.downloadToFile(video.id, "fox.mp4");
 */
export { Videogen, VERSION, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RETRIES } from "./client.js";
export type { ClientOptions } from "./client.js";
export {
  VideogenError,
  APIConnectionError,
  APITimeoutError,
  APIError,
  APIStatusError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  ValidationError,
  RateLimitError,
  BudgetExceededError,
  InternalServerError,
  GenerationFailedError,
  WaitTimeoutError,
  BatchWaitTimeoutError,
} from "./core/errors.js";
export { Page, PagePromise } from "./core/pagination.js";
export type { RequestOptions, Fetch, Sleep } from "./core/transport.js";
export type { ServerSentEvent } from "./core/sse.js";
export type {
  GenerationCreateParams,
  CreateOptions,
  WaitOptions,
  CreateAndWaitOptions,
  EventsOptions,
  GenerationEvent,
  DownloadOptions,
  ImageSource,
} from "./resources/generations.js";
export type { UploadSource, UploadOptions, ModelListParams } from "./resources/uploads.js";
export {
  BATCH_FINISHED_STATUSES,
  DEFAULT_BATCH_POLL_INTERVAL_MS,
  isBatchFinished,
} from "./resources/batches.js";
export type { BatchCreateOptions, BatchWaitOptions, BatchResultsOptions } from "./resources/batches.js";
export { WebhookVerificationError } from "./webhooks.js";
export type { WebhookEvent, VerifyOptions, Payload, HeadersLike } from "./webhooks.js";
export { TERMINAL_STATUSES, isTerminal } from "./models.js";
export type * from "./models.js";
export type { components, operations, paths } from "./generated/openapi.js";
