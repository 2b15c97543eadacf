/**
 * The API's requests and answers, by name: each is the generated type of the OpenAPI schema of the same name
 * (`./generated/openapi.ts`), so they are field for field what the API serves. Enumerations are open: a value
 * a newer server sends (a provider, status or event type added since) is a plain string, never an error.
 */
import type { components, operations } from "./generated/openapi.js";

/** Every schema of the API's OpenAPI document, by name. */
export type Schemas = components["schemas"];

export type Status = Schemas["Status"];
export type Provider = Schemas["Provider"];
export type EventType = Schemas["EventType"];
export type DeliveryStatus = Schemas["Delivery"]["status"];
export type AuditEventType = Schemas["AuditEventType"];
export type AuditActorType = Schemas["AuditActorType"];
export type AspectRatio = Schemas["AspectRatio"];
export type Resolution = Schemas["Resolution"];
export type Priority = Schemas["Priority"];
export type ErrorCode = Schemas["ErrorCode"];
export type QueueReason = Schemas["QueueReason"];
export type SubjectType = Schemas["SubjectType"];
export type Scope = Schemas["Scope"];
export type BudgetName = Schemas["BudgetRemaining"]["budget"];

export type Generation = Schemas["Generation"];
export type GenerationList = Schemas["GenerationList"];
export type GenerationError = Schemas["GenerationError"];
export type GenerationImage = Schemas["GenerationImage"];
export type TimelineStep = Schemas["TimelineStep"];
export type ImageInput = Schemas["ImageInput"];
export type GenerateRequest = Schemas["GenerateRequest"];
export type Upload = Schemas["Upload"];
export type ProviderInfo = Schemas["ProviderInfo"];
export type ProviderCapabilities = Schemas["ProviderCapabilities"];
export type ProviderCapacity = Schemas["ProviderCapacity"];
export type ProviderKeyCapacity = Schemas["ProviderKeyCapacity"];
export type ProviderList = Schemas["ProviderList"];
export type ModelInfo = Schemas["ModelInfo"];
export type ModelList = Schemas["ModelList"];
export type Webhook = Schemas["Webhook"];
export type WebhookCreate = Schemas["WebhookCreate"];
export type WebhookCreated = Schemas["WebhookCreated"];
export type WebhookUpdate = Schemas["WebhookUpdate"];
export type WebhookList = Schemas["WebhookList"];
export type RotatedSecret = Schemas["RotatedSecret"];
export type Delivery = Schemas["Delivery"];
export type DeliveryAttempt = Schemas["DeliveryAttempt"];
export type DeliveryList = Schemas["DeliveryList"];
export type RecoverRequest = Schemas["RecoverRequest"];
export type Recovered = Schemas["Recovered"];
export type Usage = Schemas["Usage"];
export type UsageRow = Schemas["UsageRow"];
export type UsageTotals = Schemas["UsageTotals"];
export type KeyUsage = Schemas["KeyUsage"];
export type AuditEvent = Schemas["AuditEvent"];
export type AuditActor = Schemas["AuditActor"];
export type AuditTarget = Schemas["AuditTarget"];
export type AuditEventList = Schemas["AuditEventList"];
export type Event = Schemas["Event"];
export type EventSubject = Schemas["EventSubject"];
export type EventList = Schemas["EventList"];
export type ApiKey = Schemas["ApiKey"];
export type ApiKeyCreate = Schemas["ApiKeyCreate"];
export type ApiKeyCreated = Schemas["ApiKeyCreated"];
export type ApiKeyUpdate = Schemas["ApiKeyUpdate"];
export type ApiKeyList = Schemas["ApiKeyList"];
export type ApiKeyBudgets = Schemas["ApiKeyBudgets"];
export type BudgetLimits = Schemas["BudgetLimits"];
export type Budgets = Schemas["Budgets"];
export type BudgetRemaining = Schemas["BudgetRemaining"];
export type ScopeProblem = Schemas["ScopeProblem"];
export type BudgetProblem = Schemas["BudgetProblem"];
export type FieldError = Schemas["FieldError"];
/** An `application/problem+json` answer (RFC 9457), `errors` on a 422; every field optional, as an error
 * may come from a proxy in front of the API rather than from the API. */
export type Problem = Partial<Schemas["ValidationProblem"]>;

type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;
/** A value or several (sent as a repeated parameter). */
type OneOrMore<T> = T extends readonly (infer Item)[] ? Item | readonly Item[] : T;
/** A time: a `Date`, or ISO 8601 text with a time zone. */
export type Moment = Date | string;
type Filters<Q> = {
  [K in keyof Q]?: K extends "created_after" | "created_before" | "start" | "end" ? Moment : OneOrMore<Q[K]>;
};

// Filters that take several values name the enumeration itself, so editors offer its values.
export type GenerationListParams = Omit<Filters<Query<"listGenerations">>, "status" | "provider"> & {
  status?: Status | readonly Status[];
  provider?: Provider | readonly Provider[];
};
export type DeliveryListParams = Filters<Query<"listDeliveries">>;
export type AuditEventListParams = Omit<Filters<Query<"listAuditEvents">>, "type"> & {
  type?: AuditEventType | readonly AuditEventType[];
};
export type UsageParams = Filters<Query<"getUsage">>;
/** `type`: an `EventType`, `webhook.test`, or one newer than this SDK. */
export type EventListParams = Omit<Filters<Query<"listEvents">>, "type"> & {
  type?: EventType | readonly EventType[];
};
export type ApiKeyListParams = Filters<Query<"listApiKeys">>;
export type Batch = Schemas["Batch"];
export type BatchRequest = Schemas["BatchRequest"];
/** One item of a batch: what `generations.create` takes, and an optional `custom_id`. */
export type BatchItemParams = Schemas["BatchItem"];
export type BatchError = Schemas["BatchError"];
export type BatchGeneration = Schemas["BatchGeneration"];
export type BatchCancel = Schemas["BatchCancel"];
export type BatchListParams = Filters<Query<"listBatches">>;
export type BatchGenerationListParams = Filters<Query<"listBatchGenerations">>;
/** One line of a batch's results file. */
export interface BatchResult {
  id: string;
  custom_id: string | null;
  status: Status;
  video_url: string | null;
  thumbnail_url: string | null;
  error: GenerationError | null;
  cost: number | null;
}
/** `expires_at`: a `Date`, or ISO 8601 text with a time zone. */
export type ApiKeyCreateParams = Omit<ApiKeyCreate, "expires_at"> & { expires_at?: Moment | null };

/** The states a generation ends in. */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(["completed", "failed"]);

/** Whether the generation is finished (`completed` or `failed`); an unknown status is not. */
export function isTerminal(generation: Pick<Generation, "status">): boolean {
  return TERMINAL_STATUSES.has(generation.status);
}
