// Type-level tests (tsc -p test/types): what the types accept and refuse. `@ts-expect-error` fails the
// check if the line below it is NOT an error.
import type {
  ApiKeyCreateParams,
  AuditEventType,
  BudgetName,
  ErrorCode,
  EventListParams,
  EventType,
  Generation,
  GenerationCreateParams,
  GenerationListParams,
  Provider,
  Scope,
  Status,
  SubjectType,
  WebhookCreate,
} from "../../src/index.js";

// A value a newer server sends (or a newer provider a tenant asks for) is valid: enumerations stay open.
export const known: Provider = "mock";
export const added: Provider = "veo";
export const status: Status = "upscaling";
export const event: EventType = "video.upscaled";
export const audit: AuditEventType = "budget.exceeded";
export const scope: Scope = "videos:upscale";
export const subject: SubjectType = "organization";
export const code: ErrorCode = "content_policy_v2";
export const budget: BudgetName = "daily_tokens";
export const costBudget: BudgetName = "monthly_cost";
export const key: ApiKeyCreateParams = {
  name: "batch job",
  scopes: ["generations:write", "videos:upscale"],
  expires_at: new Date(),
  budgets: { daily_video_seconds: 600, daily_cost: 12.5 },
};
export const events: EventListParams = { type: ["video.completed", "webhook.test"], subject_id: "gen_1" };
export const request: GenerationCreateParams = {
  prompt: "p",
  provider: "veo",
  duration: 3,
  aspect_ratio: "2.39:1",
};
export const hook: WebhookCreate = {
  url: "https://example.com/hook",
  events: ["video.completed", "video.upscaled"],
};
export const filters: GenerationListParams = {
  status: ["completed", "upscaling"],
  provider: "veo",
  created_after: new Date(),
};

// An unknown status falls through to the default branch rather than being impossible.
export function describe(generation: Generation): string {
  switch (generation.status) {
    case "completed":
      return "done";
    case "failed":
      return generation.error?.code ?? "failed";
    default:
      return `still ${generation.status}`;
  }
}

// Still typed: wrong kinds and missing fields are refused.
// @ts-expect-error a provider is a string
export const wrong: Provider = 42;
// @ts-expect-error prompt is required
export const missing: GenerationCreateParams = { provider: "mock", duration: 3 };
// @ts-expect-error duration is a number
export const badDuration: GenerationCreateParams = { prompt: "p", provider: "mock", duration: "5" };
// @ts-expect-error a key needs its scopes
export const noScopes: ApiKeyCreateParams = { name: "batch job" };
// @ts-expect-error a budget is a number of seconds
export const badBudget: ApiKeyCreateParams = { name: "n", scopes: [], budgets: { daily_video_seconds: "1" } };
// @ts-expect-error no such field on a generation
export const typo: Generation["vidoe_url"] = null;
