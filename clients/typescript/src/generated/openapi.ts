// The videogen API's types, generated from its OpenAPI document by scripts/generate-types.mjs
// (openapi-typescript). Do not edit: run `make ts-types` after the API changes.

export interface paths {
    "/v1/generate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submit a generation
         * @description The generation is durably stored before the answer, with status processing; the orchestrator takes it from there. With an Idempotency-Key, a repeat of the same request replays the saved 202 (with Idempotent-Replayed: true) and creates nothing; concurrent repeats create one generation. With Prefer: wait=N the answer comes once the generation is finished or after N seconds (at most 60), whichever is first. Its seconds and estimated cost are reserved on the account's and the key's budgets first: one it would pass refuses it with 429 budget-exceeded, and nothing is written.
         */
        post: operations["createGeneration"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a generation
         * @description Another account's generation answers exactly like an unknown one. With Prefer: wait=N the answer comes once the generation is finished or after N seconds (at most 60), whichever is first: no polling.
         */
        get: operations["getGeneration"];
        put?: never;
        post?: never;
        /**
         * Delete a generation
         * @description Its video, thumbnail and first frame are deleted from storage, its links answer 410 Gone, and its prompt, negative_prompt, metadata and image are erased, from its recorded events and deliveries too. An unfinished one is canceled first, as the cancel route does. GET still answers it, as a tombstone (deleted: true, status unchanged), and usage still counts it; lists leave it out. video.deleted is sent. Deleting it again answers 204 too.
         */
        delete: operations["deleteGeneration"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List generations
         * @description The account's generations, newest first (ties by id), but those deleted (GET by id still answers their tombstone; usage still counts them). Filters narrow the set; a cursor holds only a position, so a walk never skips or repeats while new generations arrive.
         */
        get: operations["listGenerations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a generation
         * @description An unfinished generation becomes failed, with error code canceled, and video.failed is sent. The orchestrator then cancels the provider's own task where the provider allows it (best effort); any result it still produces is discarded.
         */
        post: operations["cancelGeneration"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List batches
         * @description The account's batches, newest first. In a list, unfinished items count as processing.
         */
        get: operations["listBatches"];
        put?: never;
        /**
         * Submit a batch of generations
         * @description Up to 10000 items, each the body of POST /v1/generate plus an optional custom_id (unique within the batch), as a JSON body (items, metadata, on_invalid, item_events) or as JSONL (Content-Type: application/jsonl, one item per line; the options then as query parameters: on_invalid, item_events, metadata[KEY]). Each item is validated, routed and reserved on the budgets as a single create is; with on_invalid refuse (the default) one invalid item refuses the batch (422, the first 100 invalid items listed by index and custom_id, nothing written), with skip the valid ones are accepted and the others listed in the batch's refused. An item past a budget is invalid with code budget_exceeded. Items are low priority unless they say otherwise. With an Idempotency-Key, re-sending the same body answers the same batch (with Idempotent-Replayed: true) and creates nothing more.
         */
        post: operations["createBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a batch
         * @description Its status, its items counted by state (every count but queued is kept on the batch as items end; queued is counted when it is read), its estimated and actual cost. Another account's batch answers like an unknown one.
         */
        get: operations["getBatch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches/{id}/generations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a batch's generations
         * @description Its items' generations in the order they were given, filtered by status and custom_id.
         */
        get: operations["listBatchGenerations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches/{id}/results": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download a batch's results
         * @description JSONL, one line per item in the order given: id, custom_id, status, video_url and thumbnail_url (signed links, once completed), error (once failed), cost. Streamed; an unfinished batch's unfinished items show their status now.
         */
        get: operations["getBatchResults"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a batch
         * @description Every item that has not started (nothing submitted to a provider yet) is canceled, as POST /v1/generations/{id}/cancel cancels one (failed, error code canceled; what it reserved is given back); those already at a provider are left to finish and listed in not_canceled. The batch is canceling until its last item ends, then canceled (and batch.completed is sent).
         */
        post: operations["cancelBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations/{id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Follow a generation live (Server-Sent Events)
         * @description The generation as it is, at once, then an event for every change of its status or progress until it is completed or failed, when the stream ends. Every event is `event: generation` with the generation (as GET answers it) as `data`, and an `id` ordering its changes: reconnect with `Last-Event-ID` to get only what is newer. Served by any api replica. Each account may hold a bounded number of streams open on one api process.
         */
        get: operations["streamGenerationEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/providers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List providers and what they can make
         * @description Every provider the API knows, whether this deployment offers it, and its aspect ratios, resolutions, durations and inputs. A request asking a provider for something it cannot make is a 422 naming the field and what the provider would accept. Each provider's capacity is the deployment's: its keys' limits, how many run and how many wait now; its health is its breaker (routing skips a provider that is down) and its recent success rate and p50 time to finish; its prices are per second of video, per model and resolution.
         */
        get: operations["listProviders"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List models and what each can make
         * @description Every model of every provider the API knows, as this deployment configures them: the durations, aspect ratios and resolutions it makes, whether it takes a first frame, a seed or a negative prompt, its price per second of video by resolution, and whether it is its provider's default (what a request that names no model gets). A request's model field names one; a request it cannot make is a 422 naming its limits. Filter by provider and by what a model can do: ?provider=runway&image_to_video=true&duration=10.
         */
        get: operations["listModels"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/uploads": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Upload an image for a first frame
         * @description The image's bytes with its Content-Type, or a multipart/form-data form whose file part holds them. Its type is taken from its content, which must decode as a PNG, JPEG or WebP image, at most 8192 pixels on each side. Use the answer's id as image.upload_id on POST /v1/generate until expires_at; only this account can.
         */
        post: operations["createUpload"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/uploads/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an upload
         * @description Until it expires (expires_at) or is deleted; then, and for another account's upload, 404. Its bytes are not served back.
         */
        get: operations["getUpload"];
        put?: never;
        post?: never;
        /**
         * Delete an upload
         * @description Its bytes are deleted from storage at once, and it can no longer be used: a generation made from it that has not started yet fails with image_unusable. Deleted, or expired, it answers 404.
         */
        delete: operations["deleteUpload"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List webhook endpoints
         * @description All of the account's endpoints, oldest first, without their secrets.
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Register a webhook endpoint
         * @description The answer carries the endpoint's signing secret, shown only here (and on rotation).
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a webhook endpoint
         * @description Without its secret.
         */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook endpoint
         * @description Its pending deliveries fail with reason endpoint deleted; its deliveries stay readable.
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /**
         * Change a webhook endpoint
         * @description Any of url, events and active, each checked as on creation. active: true re-enables a disabled endpoint and resets its health; active: false disables it.
         */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/v1/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate an endpoint's signing secret
         * @description The new secret is shown only here. The previous one keeps signing beside it for the overlap period (24 h by default), so a receiver can switch at its own pace.
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List an endpoint's deliveries
         * @description Newest first, each with every attempt made.
         */
        get: operations["listDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a delivery
         * @description Every attempt (time, status code, latency, error), the next attempt's time, and why it failed.
         */
        get: operations["getDelivery"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/{id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Retry a delivery
         * @description Queues a finished delivery again, now, with the same id (so the same webhook-id) and body.
         */
        post: operations["retryDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/recover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Re-send failed deliveries
         * @description Queues again every failed delivery of the endpoint created at or after since (which may reach back at most the recovery window, 14 days by default).
         */
        post: operations["recoverDeliveries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test event
         * @description Queues a signed webhook.test delivery to the endpoint, whatever events it subscribes to.
         */
        post: operations["sendTestEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the account's events
         * @description What happened on the account, newest first, as its webhooks deliver it: each generation that completed or failed, each endpoint the service disabled, each test event. The best-effort video.processing and video.progress are not kept.
         */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an event
         * @description What happened, to what, and the data each of its deliveries carried.
         */
        get: operations["getEvent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the account's usage
         * @description How many generations the account made and how many seconds of video, by UTC day, provider and status, over [start, end) (by default the last 30 days; at most 366 days), in total and per API key. Counted from the generations themselves by when each was made: once each, however often their events were delivered. seconds is what was asked for, video_seconds what was made (completed ones); cost is what their providers charged (USD), and providers says it by provider, every try at each counted, models by provider and model. budgets: what is left now of the account's budgets and of the key's (the one asked about, or else the one making the request).
         */
        get: operations["getUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/budgets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the account's budgets
         * @description Hard budgets of the whole account, on top of each key's own: at most this many seconds of video, and this much cost (US dollars), per UTC day and per calendar month. A generation is charged its duration and its estimated_cost (its first candidate's price; 0 where the price is unknown) when it is made, and refused with 429 budget-exceeded if that would pass a budget (nothing is written); a fallback to another provider does not change what was counted. One that fails before it reaches a provider (canceled first, refused for its image, out of time) gives its seconds and cost back. When a budget's use reaches threshold_percent of it, that is announced once in the period.
         */
        get: operations["getBudgets"];
        /**
         * Set the account's budgets
         * @description Hard budgets of the whole account, on top of each key's own: at most this many seconds of video, and this much cost (US dollars), per UTC day and per calendar month. A generation is charged its duration and its estimated_cost (its first candidate's price; 0 where the price is unknown) when it is made, and refused with 429 budget-exceeded if that would pass a budget (nothing is written); a fallback to another provider does not change what was counted. One that fails before it reaches a provider (canceled first, refused for its image, out of time) gives its seconds and cost back. When a budget's use reaches threshold_percent of it, that is announced once in the period. PUT replaces them all: a budget null or left out has no limit. Every api replica applies the change within VIDEOGEN_BUDGET_CACHE_SECONDS (5 s by default); the one answering, at once. A budget set in the middle of a period counts what the period's generations already used.
         */
        put: operations["setBudgets"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the account's API keys
         * @description Newest first, revoked ones too: never a secret, only each key's prefix and last four.
         */
        get: operations["listApiKeys"];
        put?: never;
        /**
         * Make an API key
         * @description A new key of the account, with the scopes given (at most those of the key making it), an optional expiry and optional budgets of its own (at most those of the key making it). The answer carries the key itself, in secret: shown only here. Only its hash is kept.
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an API key
         * @description Another account's key answers exactly like an unknown one.
         */
        get: operations["getApiKey"];
        put?: never;
        post?: never;
        /**
         * Revoke an API key
         * @description It stops working at once on the api replica that answers, and on every other within the key cache's bound (VIDEOGEN_API_KEY_CACHE_SECONDS, 5 s by default). Revoking a revoked key changes nothing. A key holding scopes the requesting key lacks is a 403; a key may revoke itself.
         */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        /**
         * Change an API key's name or budgets
         * @description Its name, its own budgets (replaced as a whole, same fields as PUT /v1/budgets; at most those of the key making the request), or both; a key holding scopes the requesting key lacks is a 403. The change reaches every api replica within the key cache's bound (5 s by default).
         */
        patch: operations["updateApiKey"];
        trace?: never;
    };
    "/v1/audit-events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the account's audit events
         * @description Every change to the account's API keys and webhook endpoints, newest first: what changed, who made it (one of your API keys, an operator at the command line, or the system, e.g. the notifier disabling an endpoint that answered 410), when, and the request that made it. Never a secret.
         */
        get: operations["listAuditEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/media/{folder}/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download a video or thumbnail
         * @description The target of a generation's video_url and thumbnail_url. The signature is the credential: no API key. An expired or forged link answers like a missing file; a link to a deleted generation's media answers 410 Gone. Supports a single byte `Range` (with `If-Range`), and conditional GET with `If-None-Match` / `If-Modified-Since` against the `ETag` and `Last-Modified` it sends; `HEAD` answers the headers alone.
         */
        get: operations["getMedia"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/provider-callbacks/{provider}/{token}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A provider calls back about a task
         * @description Called by the video providers, not by clients: Luma posts the Generation here on each state change (unsigned: the URL's token is the credential), fal posts a request's result, signed with ED25519 against its published keys (`X-Fal-Webhook-*` headers). A callback only wakes the generation's orchestrator, which reads the task from the provider before acting on it. An unknown token or a finished task is answered 200 and ignored.
         */
        post: operations["providerCallback"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * ApiKey
         * @description An API key as the account sees it: never its secret, only its prefix and last four characters.
         */
        ApiKey: {
            /** Id */
            id: string;
            /**
             * Name
             * @description null for keys made before keys had names.
             */
            name: string | null;
            /**
             * Scopes
             * @description What it may do (as given; :write holds :read).
             */
            scopes: components["schemas"]["Scope"][];
            /**
             * Prefix
             * @description How every key begins.
             */
            prefix: string;
            /**
             * Last Four
             * @description Its last four characters; null for keys made before they were kept.
             */
            last_four: string | null;
            budgets: components["schemas"]["ApiKeyBudgets"];
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Last Used At
             * @description When it was last used, to the minute; null: never since kept.
             */
            last_used_at: string | null;
            /**
             * Expires At
             * @description When it stops working; null: never.
             */
            expires_at: string | null;
            /**
             * Revoked At
             * @description When it was revoked; null: it was not.
             */
            revoked_at: string | null;
        };
        /**
         * ApiKeyBudgets
         * @description A key's own budgets (null: no limit), on top of the account's.
         */
        ApiKeyBudgets: {
            /** Daily Video Seconds */
            daily_video_seconds: number | null;
            /** Monthly Video Seconds */
            monthly_video_seconds: number | null;
            /**
             * Daily Cost
             * @description US dollars; null: no limit.
             */
            daily_cost: number | null;
            /**
             * Monthly Cost
             * @description US dollars; null: no limit.
             */
            monthly_cost: number | null;
        };
        /** ApiKeyCreate */
        ApiKeyCreate: {
            /**
             * Name
             * @description Yours, to tell it by.
             */
            name: string;
            /**
             * Scopes
             * @description What the key may do (each :write holds the :read of the same resource); at most the scopes of the key making it.
             */
            scopes: components["schemas"]["Scope"][];
            /**
             * Expires At
             * @description When it stops working (ISO 8601 with a time zone, in the future); null: never.
             * @default null
             */
            expires_at?: string | null;
            /**
             * @description Its own budgets, on top of the account's; at most those of the key making it. Absent: none.
             * @default null
             */
            budgets?: components["schemas"]["BudgetLimits"] | null;
        };
        /** ApiKeyCreated */
        ApiKeyCreated: {
            /** Id */
            id: string;
            /**
             * Name
             * @description null for keys made before keys had names.
             */
            name: string | null;
            /**
             * Scopes
             * @description What it may do (as given; :write holds :read).
             */
            scopes: components["schemas"]["Scope"][];
            /**
             * Prefix
             * @description How every key begins.
             */
            prefix: string;
            /**
             * Last Four
             * @description Its last four characters; null for keys made before they were kept.
             */
            last_four: string | null;
            budgets: components["schemas"]["ApiKeyBudgets"];
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Last Used At
             * @description When it was last used, to the minute; null: never since kept.
             */
            last_used_at: string | null;
            /**
             * Expires At
             * @description When it stops working; null: never.
             */
            expires_at: string | null;
            /**
             * Revoked At
             * @description When it was revoked; null: it was not.
             */
            revoked_at: string | null;
            /**
             * Secret
             * @description The key itself: shown here only, once. Send it as Authorization: Bearer.
             */
            secret: string;
        };
        /**
         * ApiKeyList
         * @description A page of the account's keys, newest first (revoked ones too).
         */
        ApiKeyList: {
            /** Data */
            data: components["schemas"]["ApiKey"][];
            /**
             * Next Cursor
             * @description Pass as cursor for the next page; null on the last page.
             */
            next_cursor: string | null;
        };
        /**
         * ApiKeyUpdate
         * @description PATCH /v1/api-keys/{id}: its name, its budgets (replaced as a whole: a budget left out has no limit),
         *     or both.
         */
        ApiKeyUpdate: {
            /**
             * Name
             * @description Yours, to tell it by.
             */
            name?: string;
            budgets?: components["schemas"]["BudgetLimits"];
        };
        /**
         * AspectRatio
         * @description Every aspect ratio the API knows (width:height); a provider accepts a subset.
         * @enum {string}
         */
        AspectRatio: "16:9" | "9:16" | "1:1" | "4:3" | "3:4" | "21:9" | "9:21" | "4:5" | "5:4" | "3:2" | "2:3" | (string & {});
        /** AuditActor */
        AuditActor: {
            /** @description api_key: a request with one of your keys; operator: the videogen command; system: a service on its own (e.g. the notifier disabling an endpoint). */
            type: components["schemas"]["AuditActorType"];
            /**
             * Id
             * @description The key's id, or which service; null for an operator.
             */
            id: string | null;
        };
        /**
         * AuditActorType
         * @enum {string}
         */
        AuditActorType: "api_key" | "operator" | "system" | (string & {});
        /**
         * AuditEvent
         * @description One change to the account's keys, budgets or webhooks, or a budget threshold reached. Never holds a
         *     secret.
         */
        AuditEvent: {
            /** Id */
            id: string;
            type: components["schemas"]["AuditEventType"];
            actor: components["schemas"]["AuditActor"];
            target: components["schemas"]["AuditTarget"];
            /**
             * Data
             * @description What changed: e.g. the fields before and after.
             */
            data: {
                [key: string]: unknown;
            };
            /**
             * Request Id
             * @description The request that made the change, if one did.
             */
            request_id: string | null;
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
        };
        /**
         * AuditEventList
         * @description A page of the account's audit events, newest first.
         */
        AuditEventList: {
            /** Data */
            data: components["schemas"]["AuditEvent"][];
            /**
             * Next Cursor
             * @description Pass as cursor for the next page; null on the last page.
             */
            next_cursor: string | null;
        };
        /**
         * AuditEventType
         * @enum {string}
         */
        AuditEventType: "api_key.created" | "api_key.revoked" | "api_key.updated" | "budget.updated" | "budget.threshold_reached" | "webhook.created" | "webhook.updated" | "webhook.deleted" | "webhook.secret_rotated" | "webhook.disabled" | "webhook.recovery_requested" | "delivery.retry_requested" | "generation.deleted" | "upload.deleted" | "retention.updated" | (string & {});
        /** AuditTarget */
        AuditTarget: {
            /**
             * Type
             * @description api_key, webhook, delivery, budget, generation or upload
             */
            type: string;
            /** Id */
            id: string;
        };
        /**
         * Batch
         * @description A batch as clients see it.
         */
        Batch: {
            /** Id */
            id: string;
            /** Object */
            object: string;
            /**
             * Status
             * @description validating: its items are being written; in_progress; canceling: a cancel was asked and items still run; completed or canceled: every item has ended; failed: its acceptance was cut short before any item was written (see error).
             * @enum {string}
             */
            status: "validating" | "in_progress" | "completed" | "canceling" | "canceled" | "failed" | (string & {});
            counts: components["schemas"]["BatchCounts"];
            /**
             * Refused
             * @description Items refused at acceptance (on_invalid skip), by index.
             */
            refused: components["schemas"]["RefusedItem"][];
            /** Item Events */
            item_events: boolean;
            /** Metadata */
            metadata: {
                [key: string]: string;
            };
            /**
             * Estimated Cost
             * @description USD, the items' estimates summed.
             */
            estimated_cost: number | null;
            /**
             * Cost
             * @description USD charged so far for its ended items.
             */
            cost: number;
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Finished At
             * @description When its last item ended; null until then.
             */
            finished_at: string | null;
            /** @description Null, unless its acceptance was cut short (the api stopped while writing its items) and the reconciler settled it: failed with none written, or in progress with those written. */
            error: components["schemas"]["BatchError"] | null;
        };
        /**
         * BatchCancel
         * @description What a cancel did.
         */
        BatchCancel: {
            batch: components["schemas"]["Batch"];
            /**
             * Canceled
             * @description Items canceled now (they had not started).
             */
            canceled: number;
            /**
             * Not Canceled
             * @description Ids of unfinished items that had started, left to finish.
             */
            not_canceled: string[];
        };
        /** BatchCounts */
        BatchCounts: {
            /**
             * Total
             * @description Items accepted.
             */
            total: number;
            /**
             * Queued
             * @description Waiting explicitly (status queued).
             */
            queued: number;
            /**
             * Processing
             * @description Unfinished, not queued.
             */
            processing: number;
            /** Completed */
            completed: number;
            /**
             * Failed
             * @description Failed, but for those canceled.
             */
            failed: number;
            /** Canceled */
            canceled: number;
        };
        /**
         * BatchError
         * @description What went wrong while a batch was accepted (its api stopped while writing its items).
         */
        BatchError: {
            /**
             * Code
             * @description batch_not_written: no item was written, the batch failed; items_not_written: some were, and they are the batch (the others were not accepted).
             */
            code: string;
            /** Message */
            message: string;
        };
        /**
         * BatchGeneration
         * @description An item of a batch: its generation, with the batch's id and your custom_id.
         */
        BatchGeneration: {
            /** Id */
            id: string;
            status: components["schemas"]["Status"];
            /** Prompt */
            prompt: string;
            provider: components["schemas"]["Provider"];
            /**
             * Model
             * @description The model asked of its provider: the one named, or the provider's default; a move to another candidate takes that candidate's. Null for generations made before models.
             */
            model: string | null;
            /** Duration */
            duration: number;
            /**
             * Video Url
             * @description A signed link, once completed.
             */
            video_url: string | null;
            /**
             * Thumbnail Url
             * @description A signed link, once completed.
             */
            thumbnail_url: string | null;
            /** @description Why it failed, once failed. */
            error: components["schemas"]["GenerationError"] | null;
            /**
             * Progress
             * @description How far the provider is, 0 to 100, while processing (100 once completed); null when the provider does not say.
             */
            progress: number | null;
            /** @description Why a queued generation waits: account_concurrency (your account's cap on generations in flight), provider_capacity (the provider's capacity is in use: it starts as soon as a slot frees, in fair turn with other accounts) or provider (the provider's own queue); null otherwise. */
            queue_reason: components["schemas"]["QueueReason"] | null;
            /**
             * Queue Position
             * @description While it waits for capacity (account_concurrency or provider_capacity): its place among your account's generations waiting at that provider, 1 being the next of yours to start (other accounts' work is interleaved fairly). Given when one generation is read; null in lists and otherwise.
             */
            queue_position: number | null;
            /** @description As asked (normal by default). */
            priority: components["schemas"]["Priority"];
            /**
             * Timeline
             * @description Every state it entered, oldest first.
             */
            timeline: components["schemas"]["TimelineStep"][];
            /** @description As asked; null: the provider's default. */
            aspect_ratio: components["schemas"]["AspectRatio"] | null;
            /** @description As asked; null: the deployment's default. */
            resolution: components["schemas"]["Resolution"] | null;
            /**
             * Seed
             * @description As asked; null if none was given.
             */
            seed: number | null;
            /**
             * Negative Prompt
             * @description As asked; null if none was given.
             */
            negative_prompt: string | null;
            /**
             * Metadata
             * @description Your metadata, as given ({} if none).
             */
            metadata: {
                [key: string]: string;
            };
            /** @description The first frame asked for; null if none. */
            image: components["schemas"]["GenerationImage"] | null;
            /** @description Its candidates and why, when the request asked for routing; null otherwise. */
            route: components["schemas"]["GenerationRoute"] | null;
            /**
             * Attempts
             * @description Every try at a provider, oldest first ([] before one).
             */
            attempts: components["schemas"]["GenerationAttempt"][];
            /**
             * Estimated Cost
             * @description USD its first candidate charges for it, at creation; null if not known.
             */
            estimated_cost: number | null;
            /**
             * Cost
             * @description USD its providers charged, once finished: every try whose task was made (or failed where that provider charges failures); null until finished, or if a price is not known.
             */
            cost: number | null;
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Updated At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            updated_at: string;
            /**
             * Deleted
             * @description Deleted (DELETE /v1/generations/{id}): its media is gone and its prompt, negative_prompt, metadata, image and links are erased; the rest stays, so usage stays exact.
             */
            deleted: boolean;
            /**
             * Deleted At
             * @description When it was deleted; null if it was not.
             */
            deleted_at: string | null;
            /** Batch Id */
            batch_id: string;
            /**
             * Custom Id
             * @description As given; null if none was.
             */
            custom_id: string | null;
        };
        /** BatchGenerationList */
        BatchGenerationList: {
            /** Data */
            data: components["schemas"]["BatchGeneration"][];
            /**
             * Next Cursor
             * @description Pass as cursor for the next page; null on the last page.
             */
            next_cursor: string | null;
        };
        /**
         * BatchItem
         * @description One item: the body of POST /v1/generate, with your ``custom_id``. Its priority is low unless given.
         */
        BatchItem: {
            /**
             * Prompt
             * @description Text description of the video.
             */
            prompt: string;
            /**
             * Provider
             * @description The provider, or "auto": any enabled provider that can make what is asked, in the routing order (see routing). The chosen one, and why, is the generation's route.
             */
            provider: components["schemas"]["Provider"] | "auto";
            /**
             * Duration
             * @description Seconds, 3 to 10, as a JSON integer: 5, not 5.0 or "5".
             */
            duration: number;
            /**
             * Deadline Seconds
             * @description Optional: if the video is not finished this many seconds after the request, the generation fails with error code deadline_exceeded (the provider's task is cancelled where the provider allows it, and video.failed is sent). The Cancel-After header says the same.
             * @default null
             */
            deadline_seconds?: number | null;
            /**
             * @description Width:height. Optional (the provider's default, 16:9); see GET /v1/providers.
             * @default null
             */
            aspect_ratio?: components["schemas"]["AspectRatio"] | null;
            /**
             * @description The frame's shorter side. Optional (the deployment's default for the provider); see GET /v1/providers.
             * @default null
             */
            resolution?: components["schemas"]["Resolution"] | null;
            /**
             * Seed
             * @default null
             */
            seed?: number | null;
            /**
             * Negative Prompt
             * @description What the video should not show (where the provider takes one).
             * @default null
             */
            negative_prompt?: string | null;
            /**
             * Metadata
             * @default null
             */
            metadata?: {
                [key: string]: string;
            } | null;
            /**
             * @description The first frame (image to video), where the provider takes one.
             * @default null
             */
            image?: components["schemas"]["ImageInput"] | null;
            /**
             * @description Optional: high, normal (the default) or low. When your generations wait for the provider's capacity, yours start in this order (oldest first within each); it does not move you ahead of other accounts, which share the provider fairly.
             * @default null
             */
            priority?: components["schemas"]["Priority"] | null;
            /**
             * Model
             * @description Optional: the model to ask of the provider (GET /v1/models lists them, with what each makes and its price); absent: the provider's default model. A model that cannot make what is asked (its durations: a duration longer than its longest is refused; ratios, resolutions, first frame, seed, negative prompt) is a 422 naming its limits. With "auto" or fallbacks, a candidate named without a model is asked for this one, and skipped if it does not serve it.
             * @default null
             */
            model?: string | null;
            /**
             * Fallback Providers
             * @description Optional: where else the generation may go, in order, after provider (with "auto": the only providers it may go to). Those that cannot make what is asked, or are not enabled, are skipped (the route says why). A generation moves on only when its attempt cost nothing (the provider was unreachable, answered 5xx or refused for capacity before making a task, or its breaker is open), or, with fallback_on_failure, when the provider failed a task it had accepted with a retriable error; never when whether a task was made is unknown.
             * @default null
             */
            fallback_providers?: (components["schemas"]["Provider"] | string)[] | null;
            /**
             * @description Optional: how candidates are ordered.
             * @default null
             */
            routing?: components["schemas"]["RoutingOptions"] | null;
            /**
             * Fallback On Failure
             * @description Optional (default false): also move on to the next candidate when a provider accepted the task and then failed it with a retriable error (the provider may have charged for the failed try: see GET /v1/providers).
             * @default null
             */
            fallback_on_failure?: boolean | null;
            /**
             * Retention Days
             * @description Optional: delete the video, thumbnail and first frame this many days after the video is made, sooner than the deployment would (never later); its links stop working then.
             * @default null
             */
            retention_days?: number | null;
            /**
             * Custom Id
             * @default null
             */
            custom_id?: string | null;
        };
        /** BatchList */
        BatchList: {
            /** Data */
            data: components["schemas"]["Batch"][];
            /**
             * Next Cursor
             * @description Pass as cursor for the next page; null on the last page.
             */
            next_cursor: string | null;
        };
        /**
         * BatchProblem
         * @description A batch refused for its items: the first of them, each by index and custom_id with its errors.
         */
        BatchProblem: {
            /**
             * Type
             * @description What kind of error.
             */
            type: string;
            /** Title */
            title: string;
            /**
             * Status
             * @description The HTTP status, repeated.
             */
            status: number;
            /**
             * Detail
             * @description What happened; absent when the title says it all.
             */
            detail?: string;
            /**
             * Instance
             * @description The request path.
             */
            instance: string;
            /** Errors */
            errors: components["schemas"]["FieldError"][];
            /** Items */
            items: components["schemas"]["RefusedItem"][];
            /**
             * Invalid Count
             * @description How many items were invalid in all.
             */
            invalid_count: number;
        };
        /**
         * BatchRequest
         * @description POST /v1/batches as JSON.
         */
        BatchRequest: {
            /**
             * Metadata
             * @description Up to 16 keys (letters, digits, _ and -, at most 40 characters) with string values of at most 500 characters: your own ids and labels, never interpreted, returned on the generation and in its webhooks, and filterable in the listing.
             */
            metadata?: {
                [key: string]: string;
            };
            /**
             * On Invalid
             * @description refuse (the default): a batch with an invalid item is refused whole (422, each bad item by index and custom_id); skip: accepted with the valid items, the others listed in refused.
             * @default refuse
             * @enum {string}
             */
            on_invalid?: "refuse" | "skip" | (string & {});
            /**
             * Item Events
             * @description false: the items send no video.* webhooks; batch.completed is the one event. true by default.
             * @default true
             */
            item_events?: boolean;
            /**
             * Items
             * @description 1 to 10000 items.
             */
            items: components["schemas"]["BatchItem"][];
        };
        /**
         * Breaker
         * @description A provider's (or key's) breaker: ``closed`` takes work; ``open`` takes none until its cool-down ends;
         *     ``half_open`` takes one probe at a time, and closes on its success.
         * @enum {string}
         */
        Breaker: "closed" | "half_open" | "open" | (string & {});
        /**
         * BudgetLimits
         * @description Hard budgets: a generation that would pass one is refused (429 budget-exceeded) before anything is
         *     written. Seconds of video are counted as asked for (duration), and cost as estimated (estimated_cost:
         *     its first candidate's price; 0 where the price is unknown), when the generation is made; a generation
         *     that fails before it reaches a provider gives both back. PUT replaces every budget: a field left out has
         *     no limit.
         */
        BudgetLimits: {
            /**
             * Daily Video Seconds
             * @description At most this many seconds of video per UTC day; null or absent: no limit.
             * @default null
             */
            daily_video_seconds?: number | null;
            /**
             * Monthly Video Seconds
             * @description At most this many seconds of video per calendar month (UTC); null or absent: no limit.
             * @default null
             */
            monthly_video_seconds?: number | null;
            /**
             * Daily Cost
             * @description At most this much estimated cost, in US dollars (to the millionth), per UTC day; null or absent: no limit.
             * @default null
             */
            daily_cost?: number | null;
            /**
             * Monthly Cost
             * @description At most this much estimated cost, in US dollars (to the millionth), per calendar month (UTC); null or absent: no limit.
             * @default null
             */
            monthly_cost?: number | null;
        };
        /**
         * BudgetProblem
         * @description 429 budget-exceeded: which budget the generation would pass, whose, what is left, when it resets.
         */
        BudgetProblem: {
            /**
             * Type
             * @constant
             */
            type: "urn:videogen:problem:budget-exceeded";
            /** Title */
            title: string;
            /**
             * Status
             * @description The HTTP status, repeated.
             */
            status: number;
            /**
             * Detail
             * @description What happened; absent when the title says it all.
             */
            detail?: string;
            /**
             * Instance
             * @description The request path.
             */
            instance: string;
            /**
             * Budget
             * @enum {string}
             */
            budget: "daily_video_seconds" | "monthly_video_seconds" | "daily_cost" | "monthly_cost" | (string & {});
            /**
             * Api Key Id
             * @description The key whose budget it is; null: the account's.
             */
            api_key_id: string | null;
            /**
             * Limit
             * @description Seconds of video; US dollars for a cost budget.
             */
            limit: number;
            /** Used */
            used: number;
            /** Remaining */
            remaining: number;
            /**
             * Requested
             * @description What the generation needed (its seconds, or its estimated cost).
             */
            requested: number;
            /**
             * Resets At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            resets_at: string;
        };
        /**
         * BudgetRemaining
         * @description One hard budget of the account or of one key as it stands now: its limit, what is used (reserved by
         *     the period's generations, less what failed ones gave back) and left, and when it resets.
         */
        BudgetRemaining: {
            /**
             * Api Key Id
             * @description The key whose budget it is; null: the account's.
             */
            api_key_id: string | null;
            /**
             * Budget
             * @enum {string}
             */
            budget: "daily_video_seconds" | "monthly_video_seconds" | "daily_cost" | "monthly_cost" | (string & {});
            /**
             * Limit
             * @description Seconds of video; US dollars (to the millionth) for a cost budget.
             */
            limit: number;
            /** Used */
            used: number;
            /** Remaining */
            remaining: number;
            /**
             * Period Start
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            period_start: string;
            /**
             * Resets At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            resets_at: string;
        };
        /**
         * Budgets
         * @description The account's budgets, and what is left of each that has a limit.
         */
        Budgets: {
            /**
             * Daily Video Seconds
             * @description Per UTC day; null: no limit.
             */
            daily_video_seconds: number | null;
            /**
             * Monthly Video Seconds
             * @description Per calendar month (UTC); null: no limit.
             */
            monthly_video_seconds: number | null;
            /**
             * Daily Cost
             * @description US dollars per UTC day; null: no limit.
             */
            daily_cost: number | null;
            /**
             * Monthly Cost
             * @description US dollars per calendar month (UTC); null: no limit.
             */
            monthly_cost: number | null;
            /**
             * Threshold Percent
             * @description When a budget's use in its period reaches this share of its limit, it is announced once in that period (the audit trail's budget.threshold_reached).
             */
            threshold_percent: number;
            /** Remaining */
            remaining: components["schemas"]["BudgetRemaining"][];
        };
        /**
         * CallbackReceived
         * @description A provider callback's answer: the same whatever became of it.
         */
        CallbackReceived: {
            /**
             * Received
             * @description Always true: the call was taken (it tells the caller nothing).
             * @default true
             */
            received?: boolean;
        };
        /**
         * Delivery
         * @description One event's delivery to one endpoint, with every attempt made.
         */
        Delivery: {
            /**
             * Id
             * @description Also the webhook-id header of every attempt.
             */
            id: string;
            /** Webhook Id */
            webhook_id: string;
            /** Event Id */
            event_id: string;
            /**
             * Event Type
             * @description Its event's type: an EventType, or webhook.test. The event is GET /v1/events/{id}.
             */
            event_type: string;
            /** Generation Id */
            generation_id: string | null;
            /**
             * Status
             * @enum {string}
             */
            status: "pending" | "succeeded" | "failed" | (string & {});
            /**
             * Failure Reason
             * @description Why it failed for good, once failed.
             */
            failure_reason: string | null;
            /** Attempts */
            attempts: components["schemas"]["DeliveryAttempt"][];
            /**
             * Next Attempt At
             * @description When it is tried next; null once finished.
             */
            next_attempt_at: string | null;
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Updated At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            updated_at: string;
        };
        /** DeliveryAttempt */
        DeliveryAttempt: {
            /**
             * At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            at: string;
            /**
             * Status Code
             * @description The endpoint's HTTP status; null if none came.
             */
            status_code: number | null;
            /** Latency Ms */
            latency_ms: number | null;
            /**
             * Error
             * @description What went wrong, if anything.
             */
            error: string | null;
        };
        /**
         * DeliveryList
         * @description A page of an endpoint's deliveries, newest first.
         */
        DeliveryList: {
            /** Data */
            data: components["schemas"]["Delivery"][];
            /**
             * Next Cursor
             * @description Pass as cursor for the next page; null on the last page.
             */
            next_cursor: string | null;
        };
        /**
         * ErrorCode
         * @description Every ``generation.error.code`` value: what the adapters, the actor and the api's cancel write.
         * @enum {string}
         */
        ErrorCode: "provider_rejected" | "content_policy" | "provider_error" | "provider_timeout" | "deadline_exceeded" | "provider_unavailable" | "canceled" | "image_unusable" | "mock_failure" | (string & {});
        /**
         * Event
         * @description Something that happened on the account, as its webhooks deliver it.
         */
        Event: {
            /**
             * Id
             * @description Also its deliveries' event_id.
             */
            id: string;
            /**
             * Type
             * @description An EventType, or webhook.test.
             */
            type: string;
            subject: components["schemas"]["EventSubject"];
            /**
             * Data
             * @description The data of each of its deliveries, as delivered.
             */
            data: {
                [key: string]: unknown;
            };
            /**
             * Created At
             * Format: date-time
             * @description When it happened: its deliveries' timestamp.
             */
            created_at: string;
        };
        /**
         * EventList
         * @description A page of the account's events, newest first.
         */
        EventList: {
            /** Data */
            data: components["schemas"]["Event"][];
            /**
             * Next Cursor
             * @description Pass as cursor for the next page; null on the last page.
             */
            next_cursor: string | null;
        };
        /**
         * EventSubject
         * @description What an event is about: a generation, a webhook endpoint, or the account itself.
         */
        EventSubject: {
            type: components["schemas"]["SubjectType"];
            /** Id */
            id: string;
        };
        /**
         * EventType
         * @description What an endpoint can subscribe to: video.completed: A generation completed: its video and thumbnail links are in the data.; video.failed: A generation failed (a canceled one too): why is its error.; video.processing: The provider took a generation's task (best effort).; video.progress: How far a generation is, at most every few seconds (best effort).; video.deleted: A generation was deleted: its media is gone and its prompt, metadata and links are erased (the data is its tombstone).; webhook.disabled: One of the account's other endpoints was disabled after failing for too long.; account.budget_threshold: The account, or one of its keys, has used VIDEOGEN_BUDGET_THRESHOLD_PERCENT of a budget in its period (once per period): which budget, its limit, what is used and left, when it resets.; batch.completed: Every item of a batch has ended (once per batch): the batch, with its status (completed, canceled, or failed: its acceptance was cut short before any item was written), its counts by outcome and its cost.
         * @enum {string}
         */
        EventType: "video.completed" | "video.failed" | "video.processing" | "video.progress" | "video.deleted" | "webhook.disabled" | "account.budget_threshold" | "batch.completed" | (string & {});
        /** FieldError */
        FieldError: {
            /**
             * Field
             * @description The field, parameter or header, dotted for nested fields.
             */
            field: string;
            /** Message */
            message: string;
            /** Code */
            code: string;
        };
        /** GenerateRequest */
        GenerateRequest: {
            /**
             * Prompt
             * @description Text description of the video. Not blank; at most 2000 characters.
             */
            prompt: string;
            /**
             * Provider
             * @description The provider, or "auto": any enabled provider that can make what is asked, in the routing order (see routing). The chosen one, and why, is the generation's route.
             */
            provider: components["schemas"]["Provider"] | "auto";
            /**
             * Duration
             * @description Seconds, 3 to 10, as a JSON integer: 5, not 5.0 or "5".
             */
            duration: number;
            /**
             * Deadline Seconds
             * @description Optional: if the video is not finished this many seconds after the request, the generation fails with error code deadline_exceeded (the provider's task is cancelled where the provider allows it, and video.failed is sent). The Cancel-After header says the same.
             * @default null
             */
            deadline_seconds?: number | null;
            /**
             * @description Width:height. Optional (the provider's default, 16:9); see GET /v1/providers.
             * @default null
             */
            aspect_ratio?: components["schemas"]["AspectRatio"] | null;
            /**
             * @description The frame's shorter side. Optional (the deployment's default for the provider); see GET /v1/providers.
             * @default null
             */
            resolution?: components["schemas"]["Resolution"] | null;
            /**
             * Seed
             * @default null
             */
            seed?: number | null;
            /**
             * Negative Prompt
             * @description What the video should not show (where the provider takes one).
             * @default null
             */
            negative_prompt?: string | null;
            /**
             * Metadata
             * @default null
             */
            metadata?: {
                [key: string]: string;
            } | null;
            /**
             * @description The first frame (image to video), where the provider takes one.
             * @default null
             */
            image?: components["schemas"]["ImageInput"] | null;
            /**
             * @description Optional: high, normal (the default) or low. When your generations wait for the provider's capacity, yours start in this order (oldest first within each); it does not move you ahead of other accounts, which share the provider fairly.
             * @default null
             */
            priority?: components["schemas"]["Priority"] | null;
            /**
             * Model
             * @description Optional: the model to ask of the provider (GET /v1/models lists them, with what each makes and its price); absent: the provider's default model. A model that cannot make what is asked (its durations: a duration longer than its longest is refused; ratios, resolutions, first frame, seed, negative prompt) is a 422 naming its limits. With "auto" or fallbacks, a candidate named without a model is asked for this one, and skipped if it does not serve it.
             * @default null
             */
            model?: string | null;
            /**
             * Fallback Providers
             * @description Optional: where else the generation may go, in order, after provider (with "auto": the only providers it may go to). Those that cannot make what is asked, or are not enabled, are skipped (the route says why). A generation moves on only when its attempt cost nothing (the provider was unreachable, answered 5xx or refused for capacity before making a task, or its breaker is open), or, with fallback_on_failure, when the provider failed a task it had accepted with a retriable error; never when whether a task was made is unknown.
             * @default null
             */
            fallback_providers?: (components["schemas"]["Provider"] | string)[] | null;
            /**
             * @description Optional: how candidates are ordered.
             * @default null
             */
            routing?: components["schemas"]["RoutingOptions"] | null;
            /**
             * Fallback On Failure
             * @description Optional (default false): also move on to the next candidate when a provider accepted the task and then failed it with a retriable error (the provider may have charged for the failed try: see GET /v1/providers).
             * @default null
             */
            fallback_on_failure?: boolean | null;
            /**
             * Retention Days
             * @description Optional: delete the video, thumbnail and first frame this many days after the video is made, sooner than the deployment would (never later); its links stop working then.
             * @default null
             */
            retention_days?: number | null;
        };
        /**
         * Generation
         * @description A generation as clients see it.
         */
        Generation: {
            /** Id */
            id: string;
            status: components["schemas"]["Status"];
            /** Prompt */
            prompt: string;
            provider: components["schemas"]["Provider"];
            /**
             * Model
             * @description The model asked of its provider: the one named, or the provider's default; a move to another candidate takes that candidate's. Null for generations made before models.
             */
            model: string | null;
            /** Duration */
            duration: number;
            /**
             * Video Url
             * @description A signed link, once completed.
             */
            video_url: string | null;
            /**
             * Thumbnail Url
             * @description A signed link, once completed.
             */
            thumbnail_url: string | null;
            /** @description Why it failed, once failed. */
            error: components["schemas"]["GenerationError"] | null;
            /**
             * Progress
             * @description How far the provider is, 0 to 100, while processing (100 once completed); null when the provider does not say.
             */
            progress: number | null;
            /** @description Why a queued generation waits: account_concurrency (your account's cap on generations in flight), provider_capacity (the provider's capacity is in use: it starts as soon as a slot frees, in fair turn with other accounts) or provider (the provider's own queue); null otherwise. */
            queue_reason: components["schemas"]["QueueReason"] | null;
            /**
             * Queue Position
             * @description While it waits for capacity (account_concurrency or provider_capacity): its place among your account's generations waiting at that provider, 1 being the next of yours to start (other accounts' work is interleaved fairly). Given when one generation is read; null in lists and otherwise.
             */
            queue_position: number | null;
            /** @description As asked (normal by default). */
            priority: components["schemas"]["Priority"];
            /**
             * Timeline
             * @description Every state it entered, oldest first.
             */
            timeline: components["schemas"]["TimelineStep"][];
            /** @description As asked; null: the provider's default. */
            aspect_ratio: components["schemas"]["AspectRatio"] | null;
            /** @description As asked; null: the deployment's default. */
            resolution: components["schemas"]["Resolution"] | null;
            /**
             * Seed
             * @description As asked; null if none was given.
             */
            seed: number | null;
            /**
             * Negative Prompt
             * @description As asked; null if none was given.
             */
            negative_prompt: string | null;
            /**
             * Metadata
             * @description Your metadata, as given ({} if none).
             */
            metadata: {
                [key: string]: string;
            };
            /** @description The first frame asked for; null if none. */
            image: components["schemas"]["GenerationImage"] | null;
            /** @description Its candidates and why, when the request asked for routing; null otherwise. */
            route: components["schemas"]["GenerationRoute"] | null;
            /**
             * Attempts
             * @description Every try at a provider, oldest first ([] before one).
             */
            attempts: components["schemas"]["GenerationAttempt"][];
            /**
             * Estimated Cost
             * @description USD its first candidate charges for it, at creation; null if not known.
             */
            estimated_cost: number | null;
            /**
             * Cost
             * @description USD its providers charged, once finished: every try whose task was made (or failed where that provider charges failures); null until finished, or if a price is not known.
             */
            cost: number | null;
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Updated At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            updated_at: string;
            /**
             * Deleted
             * @description Deleted (DELETE /v1/generations/{id}): its media is gone and its prompt, negative_prompt, metadata, image and links are erased; the rest stays, so usage stays exact.
             */
            deleted: boolean;
            /**
             * Deleted At
             * @description When it was deleted; null if it was not.
             */
            deleted_at: string | null;
        };
        /**
         * GenerationAttempt
         * @description One try at a provider.
         */
        GenerationAttempt: {
            provider: components["schemas"]["Provider"];
            /**
             * Model
             * @description The model it asked for; null if not recorded.
             */
            model: string | null;
            /**
             * Started At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            started_at: string;
            /**
             * Ended At
             * @description Null while it is under way.
             */
            ended_at: string | null;
            /** @description Why it failed; null if it made the video. */
            error_code: components["schemas"]["ErrorCode"] | null;
            /**
             * Cost
             * @description USD the provider charged for it (0 if it made no task); null while under way, or if its price is not known.
             */
            cost: number | null;
        };
        /**
         * GenerationError
         * @description Why a generation failed.
         */
        GenerationError: {
            code: components["schemas"]["ErrorCode"];
            /** Message */
            message: string;
            /**
             * Provider Code
             * @description The provider's own error code, when it gave one.
             */
            provider_code: string | null;
            /**
             * Retriable
             * @description Whether submitting the same request again may succeed.
             */
            retriable: boolean;
        };
        /**
         * GenerationImage
         * @description The first frame asked for: one of the two is set.
         */
        GenerationImage: {
            /** Url */
            url: string | null;
            /** Upload Id */
            upload_id: string | null;
        };
        /**
         * GenerationList
         * @description A page of generations, newest first.
         */
        GenerationList: {
            /** Data */
            data: components["schemas"]["Generation"][];
            /**
             * Next Cursor
             * @description Pass as cursor for the next page; null on the last page.
             */
            next_cursor: string | null;
        };
        /**
         * GenerationRoute
         * @description Where the generation may go and why (only when the request asked for routing).
         */
        GenerationRoute: {
            /**
             * Requested
             * @description The provider asked for, or "auto".
             */
            requested: string;
            /** @description The sort asked for; null: the default order. */
            sort: components["schemas"]["Sort"] | null;
            /** Fallback On Failure */
            fallback_on_failure: boolean;
            /**
             * Candidates
             * @description In the order they are tried; provider is the one it is at now.
             */
            candidates: components["schemas"]["RouteCandidate"][];
            /**
             * Skipped
             * @description Providers that were not candidates: not enabled, or cannot make what is asked.
             */
            skipped: components["schemas"]["RouteCandidate"][];
            /**
             * Reason
             * @description Why it is at its provider now.
             */
            reason: string | null;
        };
        /**
         * ImageInput
         * @description The video's first frame: an image at a URL we fetch, or one uploaded with POST /v1/uploads. Exactly
         *     one of the two.
         */
        ImageInput: {
            /**
             * Url
             * @description An absolute http(s) URL of a PNG, JPEG or WebP image; it must be reachable from the internet (private, loopback and link-local addresses are refused).
             */
            url?: string;
            /**
             * Upload Id
             * @description The id POST /v1/uploads answered.
             */
            upload_id?: string;
        };
        /** ItemError */
        ItemError: {
            /** Field */
            field: string;
            /** Message */
            message: string;
            /** Code */
            code: string;
        };
        /**
         * KeyUsage
         * @description What one API key made.
         */
        KeyUsage: {
            /** Generations */
            generations: number;
            /**
             * Seconds
             * @description Seconds of video asked for.
             */
            seconds: number;
            /**
             * Video Seconds
             * @description Seconds of video made: completed ones only.
             */
            video_seconds: number;
            /**
             * Cost
             * @description USD their providers charged (finished generations' cost, every try counted).
             */
            cost: number;
            /**
             * Api Key Id
             * @description The key's id; null for generations made before keys were recorded.
             */
            api_key_id: string | null;
        };
        /**
         * ModelCost
         * @description What one model of one provider charged for the range's generations, all their tries of it counted.
         */
        ModelCost: {
            provider: components["schemas"]["Provider"];
            /**
             * Model
             * @description Null: tries recorded before models were.
             */
            model: string | null;
            /**
             * Attempts
             * @description Tries of it.
             */
            attempts: number;
            /**
             * Cost
             * @description USD.
             */
            cost: number;
        };
        /**
         * ModelInfo
         * @description One model of one provider: what it makes, what it takes, and its price.
         */
        ModelInfo: {
            provider: components["schemas"]["Provider"];
            /**
             * Id
             * @description What a request's model field names.
             */
            id: string;
            /**
             * Default
             * @description Whether a request to its provider that names no model gets this one.
             */
            default: boolean;
            /**
             * Enabled
             * @description Whether this deployment offers its provider.
             */
            enabled: boolean;
            /** Description */
            description: string;
            /**
             * Durations
             * @description The lengths it makes: a request naming it is made at the nearest at least as long, and refused if longer than its longest.
             */
            durations: number[];
            /** Aspect Ratios */
            aspect_ratios: components["schemas"]["AspectRatio"][];
            /** Resolutions */
            resolutions: components["schemas"]["Resolution"][];
            default_resolution: components["schemas"]["Resolution"];
            /**
             * Text To Video
             * @description Whether it makes a video from text alone.
             */
            text_to_video: boolean;
            /**
             * Image To Video
             * @description Whether it takes a first frame.
             */
            image_to_video: boolean;
            /** Seed */
            seed: boolean;
            /** Negative Prompt */
            negative_prompt: boolean;
            /**
             * Prices
             * @description Per second of video, by resolution.
             */
            prices: components["schemas"]["ModelPrice"][];
        };
        /**
         * ModelList
         * @description The models of every provider the API knows, as this deployment configures them.
         */
        ModelList: {
            /** Data */
            data: components["schemas"]["ModelInfo"][];
        };
        /** ModelPrice */
        ModelPrice: {
            /** @description null: any resolution. */
            resolution: components["schemas"]["Resolution"] | null;
            /**
             * Usd Per Second
             * @description USD per second of video it makes.
             */
            usd_per_second: number;
        };
        /**
         * Priority
         * @description How soon a generation starts among its own account's waiting work at one provider (it does not
         *     reorder other accounts' work: a freed slot goes to the account with the fewest running first).
         * @enum {string}
         */
        Priority: "high" | "normal" | "low" | (string & {});
        /**
         * Problem
         * @description An RFC 9457 problem: every error the API returns, as application/problem+json.
         */
        Problem: {
            /**
             * Type
             * @description What kind of error.
             */
            type: string;
            /** Title */
            title: string;
            /**
             * Status
             * @description The HTTP status, repeated.
             */
            status: number;
            /**
             * Detail
             * @description What happened; absent when the title says it all.
             */
            detail?: string;
            /**
             * Instance
             * @description The request path.
             */
            instance: string;
        };
        /**
         * Provider
         * @enum {string}
         */
        Provider: "mock" | "runway" | "luma" | "pika" | (string & {});
        /**
         * ProviderCapabilities
         * @description What a provider can make.
         */
        ProviderCapabilities: {
            /**
             * Durations
             * @description The lengths it makes; a request's duration is mapped to the nearest.
             */
            durations: number[];
            /** Aspect Ratios */
            aspect_ratios: components["schemas"]["AspectRatio"][];
            /** Resolutions */
            resolutions: components["schemas"]["Resolution"][];
            default_resolution: components["schemas"]["Resolution"];
            /**
             * Image Input
             * @description Whether it takes a first frame.
             */
            image_input: boolean;
            /** Seed */
            seed: boolean;
            /** Negative Prompt */
            negative_prompt: boolean;
        };
        /**
         * ProviderCapacity
         * @description What the whole deployment runs at a provider at once, across every orchestrator instance.
         */
        ProviderCapacity: {
            /**
             * Limit
             * @description The sum of the keys' limits; null if a key has no limit of ours.
             */
            limit: number | null;
            /**
             * Effective Limit
             * @description The sum of the keys' effective limits.
             */
            effective_limit: number | null;
            /** Running */
            running: number;
            /**
             * Waiting
             * @description Generations of every account waiting for a slot.
             */
            waiting: number;
            /** Keys */
            keys: components["schemas"]["ProviderKeyCapacity"][];
        };
        /**
         * ProviderCost
         * @description What one provider charged for the range's generations, all their tries there counted.
         */
        ProviderCost: {
            provider: components["schemas"]["Provider"];
            /**
             * Attempts
             * @description Tries at it.
             */
            attempts: number;
            /**
             * Cost
             * @description USD.
             */
            cost: number;
        };
        /**
         * ProviderHealth
         * @description How the provider is doing, from its recent attempts (across its keys).
         */
        ProviderHealth: {
            /**
             * State
             * @description down: its breaker is open (routing skips it); degraded: half-open (probing), a key's breaker is not closed, or under 80% of recent attempts succeeded; operational otherwise.
             * @enum {string}
             */
            state: "operational" | "degraded" | "down" | (string & {});
            /** @description closed, half_open (one probe at a time) or open. */
            breaker: components["schemas"]["Breaker"];
            /**
             * Success Rate
             * @description Of its recent attempts; null before any.
             */
            success_rate: number | null;
            /**
             * P50 Seconds
             * @description Median time to finish of its recent tasks; null before any.
             */
            p50_seconds: number | null;
            /**
             * Samples
             * @description Recent attempts counted.
             */
            samples: number;
        };
        /** ProviderInfo */
        ProviderInfo: {
            id: components["schemas"]["Provider"];
            /**
             * Enabled
             * @description Whether this deployment offers it.
             */
            enabled: boolean;
            capabilities: components["schemas"]["ProviderCapabilities"];
            /** @description Its capacity and load; null until an orchestrator has started with it enabled. */
            capacity: components["schemas"]["ProviderCapacity"] | null;
            /** @description Its breaker and recent results; null when not enabled. */
            health: components["schemas"]["ProviderHealth"] | null;
            /**
             * Model
             * @description Its default model: what a request that names no model gets (GET /v1/models).
             */
            model: string | null;
            /**
             * Models
             * @description Every model it serves (as GET /v1/models).
             */
            models: components["schemas"]["ModelInfo"][];
            /**
             * Prices
             * @description What it charges, per model and resolution (docs/providers.md says the sources).
             */
            prices: components["schemas"]["ProviderPrice"][];
        };
        /**
         * ProviderKeyCapacity
         * @description One of the provider's keys (pools): its own limit and load.
         */
        ProviderKeyCapacity: {
            /**
             * Name
             * @description The key's name; null for a provider's only key.
             */
            name: string | null;
            /**
             * Limit
             * @description Configured concurrency; null: no limit of ours.
             */
            limit: number | null;
            /**
             * Effective Limit
             * @description What is used now: lowered when the provider refuses for capacity; null: none.
             */
            effective_limit: number | null;
            /**
             * Running
             * @description Generations at the provider on this key now.
             */
            running: number;
            /**
             * Paused Until
             * @description No new work starts on this key before then (after a refusal).
             */
            paused_until: string | null;
        };
        /**
         * ProviderList
         * @description Every provider the API knows, whether this deployment offers it, and what it can make.
         */
        ProviderList: {
            /** Data */
            data: components["schemas"]["ProviderInfo"][];
        };
        /** ProviderPrice */
        ProviderPrice: {
            /** Model */
            model: string;
            /** @description null: any resolution. */
            resolution: components["schemas"]["Resolution"] | null;
            /**
             * Usd Per Second
             * @description USD per second of video it makes.
             */
            usd_per_second: number;
        };
        /**
         * QueueReason
         * @description Why a ``queued`` generation waits, when we know (``generation.queue_reason``).
         * @enum {string}
         */
        QueueReason: "account_concurrency" | "provider_capacity" | "provider" | (string & {});
        /**
         * RecoverRequest
         * @description POST /v1/webhooks/{id}/recover: re-queue the endpoint's failed deliveries created since then.
         */
        RecoverRequest: {
            /**
             * Since
             * Format: date-time
             */
            since: string;
        };
        /**
         * Recovered
         * @description How many failed deliveries were queued again.
         */
        Recovered: {
            /** Requeued */
            requeued: number;
        };
        /** RefusedItem */
        RefusedItem: {
            /**
             * Index
             * @description Its place in the batch, from 0.
             */
            index: number;
            /**
             * Custom Id
             * @description As given; null if none was.
             */
            custom_id: string | null;
            /** Errors */
            errors: components["schemas"]["ItemError"][];
        };
        /**
         * Resolution
         * @description Every resolution the API knows, by the frame's shorter side; a provider accepts a subset.
         * @enum {string}
         */
        Resolution: "360p" | "480p" | "540p" | "720p" | "1080p" | "4k" | (string & {});
        /**
         * RotatedSecret
         * @description The new signing secret, shown only this once.
         */
        RotatedSecret: {
            /** Id */
            id: string;
            /**
             * Secret
             * @description whsec_ + base64 of 32 random bytes: the HMAC key is this whole string as issued.
             */
            secret: string;
        };
        /** RouteCandidate */
        RouteCandidate: {
            provider: components["schemas"]["Provider"];
            /**
             * Model
             * @description The model asked of it; null: its default model.
             */
            model: string | null;
            /**
             * Reason
             * @description Why it is there: its health, capacity, price and speed.
             */
            reason: string;
        };
        /**
         * RoutingOptions
         * @description How candidates are ordered (docs/providers.md, "Routing").
         */
        RoutingOptions: {
            /** @description price: the cheapest for this request first (before free capacity); speed: the shortest measured time to finish first (before price). Absent: the default order (healthy, free capacity, price, speed). */
            sort?: components["schemas"]["Sort"];
        };
        /**
         * Scope
         * @enum {string}
         */
        Scope: "generations:read" | "generations:write" | "webhooks:read" | "webhooks:write" | "events:read" | "usage:read" | "budgets:write" | "audit:read" | "keys:read" | "keys:write" | (string & {});
        /**
         * ScopeProblem
         * @description 403 insufficient-scope: the scope the request needed, which the key does not hold.
         */
        ScopeProblem: {
            /**
             * Type
             * @constant
             */
            type: "urn:videogen:problem:insufficient-scope";
            /** Title */
            title: string;
            /**
             * Status
             * @description The HTTP status, repeated.
             */
            status: number;
            /**
             * Detail
             * @description What happened; absent when the title says it all.
             */
            detail?: string;
            /**
             * Instance
             * @description The request path.
             */
            instance: string;
            scope: components["schemas"]["Scope"];
        };
        /**
         * Sort
         * @enum {string}
         */
        Sort: "price" | "speed" | (string & {});
        /**
         * Status
         * @enum {string}
         */
        Status: "queued" | "processing" | "completed" | "failed" | (string & {});
        /**
         * SubjectType
         * @description What an event is about.
         * @enum {string}
         */
        SubjectType: "generation" | "webhook" | "account" | "batch" | (string & {});
        /**
         * TimelineStep
         * @description A state the generation entered, and when.
         */
        TimelineStep: {
            status: components["schemas"]["Status"];
            /**
             * At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            at: string;
        };
        /**
         * Upload
         * @description An image uploaded for use as a first frame (``"image": {"upload_id": …}`` on POST /v1/generate).
         */
        Upload: {
            /** Id */
            id: string;
            /**
             * Content Type
             * @description From its content.
             * @enum {string}
             */
            content_type: "image/png" | "image/jpeg" | "image/webp" | (string & {});
            /** Bytes */
            bytes: number;
            /** Width */
            width: number;
            /** Height */
            height: number;
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Expires At
             * Format: date-time
             * @description Usable in a request until then.
             */
            expires_at: string;
        };
        /**
         * Usage
         * @description The account's generations made in [start, end), counted once each, from the generations themselves.
         */
        Usage: {
            /**
             * Start
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            start: string;
            /**
             * End
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            end: string;
            /**
             * Api Key Id
             * @description Only this key's generations, when asked for.
             */
            api_key_id: string | null;
            total: components["schemas"]["UsageTotals"];
            /**
             * Data
             * @description By day, provider and status; oldest day first.
             */
            data: components["schemas"]["UsageRow"][];
            /**
             * Api Keys
             * @description The same totals per API key.
             */
            api_keys: components["schemas"]["KeyUsage"][];
            /**
             * Providers
             * @description Cost by provider: what each provider charged for the tries made there.
             */
            providers: components["schemas"]["ProviderCost"][];
            /**
             * Models
             * @description Cost by provider and model: what each model charged for the tries of it.
             */
            models: components["schemas"]["ModelCost"][];
            /**
             * Budgets
             * @description What is left now of each budget of the account and of the key asked about (api_key_id), or else of the key making the request; only budgets with a limit.
             */
            budgets: components["schemas"]["BudgetRemaining"][];
        };
        /**
         * UsageRow
         * @description One day's generations of one provider that ended in (or are in) one status.
         */
        UsageRow: {
            /**
             * Date
             * @description The UTC day they were made.
             */
            date: string;
            provider: components["schemas"]["Provider"];
            status: components["schemas"]["Status"];
            /** Generations */
            generations: number;
            /**
             * Seconds
             * @description Seconds of video asked for.
             */
            seconds: number;
            /**
             * Video Seconds
             * @description Seconds of video made: completed ones only.
             */
            video_seconds: number;
            /**
             * Cost
             * @description USD their providers charged (finished generations' cost, every try counted).
             */
            cost: number;
        };
        /** UsageTotals */
        UsageTotals: {
            /** Generations */
            generations: number;
            /**
             * Seconds
             * @description Seconds of video asked for.
             */
            seconds: number;
            /**
             * Video Seconds
             * @description Seconds of video made: completed ones only.
             */
            video_seconds: number;
            /**
             * Cost
             * @description USD their providers charged (finished generations' cost, every try counted).
             */
            cost: number;
        };
        /**
         * ValidationProblem
         * @description A problem with the request's fields, parameters or headers: one entry per failing one.
         */
        ValidationProblem: {
            /**
             * Type
             * @description What kind of error.
             */
            type: string;
            /** Title */
            title: string;
            /**
             * Status
             * @description The HTTP status, repeated.
             */
            status: number;
            /**
             * Detail
             * @description What happened; absent when the title says it all.
             */
            detail?: string;
            /**
             * Instance
             * @description The request path.
             */
            instance: string;
            /** Errors */
            errors: components["schemas"]["FieldError"][];
        };
        /**
         * Webhook
         * @description A webhook endpoint. Its signing secret is never part of it.
         */
        Webhook: {
            /** Id */
            id: string;
            /** Url */
            url: string;
            /** Events */
            events: components["schemas"]["EventType"][];
            /** Active */
            active: boolean;
            /**
             * Disabled Reason
             * @description Why it was disabled; null while active.
             */
            disabled_reason: string | null;
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Updated At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            updated_at: string;
        };
        /** WebhookCreate */
        WebhookCreate: {
            /**
             * Url
             * @description An absolute https URL with a host and no credentials, whose host is not an address deliveries are refused (private, loopback, link-local and other special-purpose ranges, localhost): a 422 with code destination_not_allowed.
             */
            url: string;
            /** Events */
            events: components["schemas"]["EventType"][];
        };
        /**
         * WebhookCreated
         * @description A new webhook endpoint with its signing secret, shown only this once.
         */
        WebhookCreated: {
            /** Id */
            id: string;
            /** Url */
            url: string;
            /** Events */
            events: components["schemas"]["EventType"][];
            /** Active */
            active: boolean;
            /**
             * Disabled Reason
             * @description Why it was disabled; null while active.
             */
            disabled_reason: string | null;
            /**
             * Created At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            created_at: string;
            /**
             * Updated At
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:47:00.123Z
             */
            updated_at: string;
            /**
             * Secret
             * @description whsec_ + base64 of 32 random bytes: the HMAC key is this whole string as issued.
             */
            secret: string;
        };
        /**
         * WebhookList
         * @description All of the account's webhook endpoints, oldest first.
         */
        WebhookList: {
            /** Data */
            data: components["schemas"]["Webhook"][];
        };
        /**
         * WebhookUpdate
         * @description PATCH /v1/webhooks/{id}: any of url, events and active; each is checked exactly as on creation, and an
         *     explicit null is refused rather than read as "unchanged".
         */
        WebhookUpdate: {
            /**
             * Url
             * @description An absolute https URL with a host and no credentials, whose host is not an address deliveries are refused (private, loopback, link-local and other special-purpose ranges, localhost): a 422 with code destination_not_allowed.
             */
            url?: string;
            /** Events */
            events?: components["schemas"]["EventType"][];
            /** Active */
            active?: boolean;
        };
    };
    responses: {
        /** @description malformed-json: the body is not JSON. */
        MalformedJson: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description unauthorized: the API key is missing, malformed, unknown or revoked. */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description insufficient-scope: the API key does not hold the scope this operation needs (named in scope); nothing was done. */
        InsufficientScope: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["ScopeProblem"];
            };
        };
        /** @description not-found: no such resource for this account. */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description payload-too-large: the body is over 65536 bytes. */
        PayloadTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description unsupported-media-type: the body is not sent as application/json. */
        UnsupportedMediaType: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description validation-error: a field, parameter or header is invalid; errors names each one. */
        Invalid: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["ValidationProblem"];
            };
        };
        /** @description rate-limited: the account has spent this policy's quota for the current window; retry after Retry-After seconds. */
        RateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
    };
    parameters: {
        /** @description Only the generations made with this API key (its id, e.g. key_…). */
        ApiKeyId: string;
        /** @description Only these types of change: repeat the parameter or separate values with commas. */
        AuditEventType: (components["schemas"]["AuditEventType"] | string)[];
        /** @description Only the item with this custom_id. */
        BatchCustomId: string;
        /** @description The batch's id. */
        BatchId: string;
        /** @description With a JSONL body: as item_events in a JSON body. */
        BatchItemEvents: boolean;
        /** @description With a JSONL body: metadata[KEY]=VALUE, the batch's metadata. */
        BatchMetadata: {
            [key: string]: string;
        };
        /** @description With a JSONL body: as on_invalid in a JSON body. */
        BatchOnInvalid: "refuse" | "skip" | (string & {});
        /** @description The provider the callback URL was given to: luma, or pika (through fal). */
        CallbackProvider: string;
        /** @description The task's token, as in the callback URL the provider was given. */
        CallbackToken: string;
        /** @description A deadline for the video, as a duration: 90, 90s, 5m or 1h (at most a day). Past it the generation fails with deadline_exceeded, as with deadline_seconds (the sooner wins). */
        CancelAfter: string;
        /** @description Only those created after this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
        CreatedAfter: string;
        /** @description Only those created before this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
        CreatedBefore: string;
        /** @description The next_cursor of the previous page, as returned. */
        Cursor: string;
        /** @description The delivery's id. */
        DeliveryId: string;
        /** @description Only deliveries in this status. */
        DeliveryStatus: "pending" | "succeeded" | "failed" | (string & {});
        /** @description The event's id. */
        EventId: string;
        /** @description Only deliveries of this event type, such as video.completed, video.failed, video.processing, video.progress, video.deleted, webhook.disabled, account.budget_threshold, batch.completed, webhook.test. */
        EventType: string;
        /** @description Only events of these types: repeat the parameter or separate values with commas. */
        EventTypes: string[];
        /** @description The generation's id. */
        GenerationId: string;
        /** @description Only these providers: repeat the parameter or separate values with commas. */
        GenerationProvider: (components["schemas"]["Provider"] | string)[];
        /** @description Only these statuses: repeat the parameter or separate values with commas. */
        GenerationStatus: (components["schemas"]["Status"] | string)[];
        /** @description Makes the request safe to repeat: the same key with the same body replays the first answer; with another body it is a 422. Kept as long as the generation. Printable ASCII; spaces at either end are not part of it (HTTP drops them). */
        IdempotencyKey: string;
        /** @description The API key's id. */
        KeyId: string;
        /** @description The id of the last event received, to resume a stream: only newer changes come. */
        LastEventId: string;
        /** @description Page size, 1 to 100. */
        Limit: number;
        /** @description The link's expiry (seconds since the epoch), as in the signed link. */
        MediaExpires: number;
        /** @description video.mp4 or thumbnail.jpg, as in the signed link. */
        MediaFile: string;
        /** @description The generation's id, as in the signed link. */
        MediaFolder: string;
        /** @description The link's signature, as in the signed link. */
        MediaSignature: string;
        /** @description metadata[KEY]=VALUE: only those whose metadata has exactly VALUE under KEY; several must all match. */
        Metadata: {
            [key: string]: string;
        };
        /** @description Only models that make this aspect ratio. */
        ModelAspectRatio: components["schemas"]["AspectRatio"];
        /** @description Only models that make a video at least this many seconds long. */
        ModelDuration: number;
        /** @description true: only the models of providers this deployment offers; false: only the others. */
        ModelEnabled: boolean;
        /** @description true: only models that take a first frame; false: only those that do not. */
        ModelImageToVideo: boolean;
        /** @description true: only models that take a negative prompt; false: only the others. */
        ModelNegativePrompt: boolean;
        /** @description Only this provider's models. */
        ModelProvider: components["schemas"]["Provider"];
        /** @description Only models that make this resolution. */
        ModelResolution: components["schemas"]["Resolution"];
        /** @description true: only models that take a seed; false: only the others. */
        ModelSeed: boolean;
        /** @description true: only models that make a video from text alone; false: only the others. */
        ModelTextToVideo: boolean;
        /** @description wait=N (RFC 7240): answer once the generation is finished, or after N seconds (at most 60; more counts as 60), whichever is first. Other preferences, and a malformed one, are ignored. */
        PreferWait: string;
        /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
        RequestId: string;
        /** @description Only events about this generation, webhook endpoint or account (its id). */
        SubjectId: string;
        /** @description Only changes to this key, webhook endpoint or delivery (its id). */
        TargetId: string;
        /** @description The upload's id. */
        UploadId: string;
        /** @description The range's end (exclusive); by default now. ISO 8601 with a time zone (write + as %2B in a URL), or a date (its midnight UTC). */
        UsageEnd: string;
        /** @description The range's start (inclusive); by default 30 days before end. ISO 8601 with a time zone (write + as %2B in a URL), or a date (its midnight UTC). */
        UsageStart: string;
        /** @description The webhook endpoint's id. */
        WebhookId: string;
    };
    requestBodies: never;
    headers: {
        /** @description The request's id: the one sent, if well-formed, or one made up. Quote it when asking about a request. */
        "X-Request-Id": string;
        /** @description wait=N when the request's Prefer: wait=N was honoured (N as applied). */
        "Preference-Applied": string;
        /** @description The path of what was created or queued. */
        Location: string;
        /** @description true when this is the saved answer to an earlier request with the same key. */
        "Idempotent-Replayed": "true";
        /** @description The authentication scheme: Bearer. */
        "WWW-Authenticate": string;
        /** @description The account's rate limit policy that this request spends (IETF draft-ietf-httpapi-ratelimit-headers-10), e.g. "generate";q=50;w=1: q requests per window of w seconds. POST /v1/generate spends the generate policy, every other request the default one. On every answer to an authenticated request. */
        "RateLimit-Policy": string;
        /** @description What is left of it, e.g. "generate";r=42;t=1: r more requests in this window, which ends in t seconds. On every answer to an authenticated request. */
        RateLimit: string;
        /** @description Seconds to wait before trying again: until the rate limit window ends. */
        "Retry-After": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    createGeneration: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to repeat: the same key with the same body replays the first answer; with another body it is a 422. Kept as long as the generation. Printable ASCII; spaces at either end are not part of it (HTTP drops them). */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
                /** @description wait=N (RFC 7240): answer once the generation is finished, or after N seconds (at most 60; more counts as 60), whichever is first. Other preferences, and a malformed one, are ignored. */
                Prefer?: components["parameters"]["PreferWait"];
                /** @description A deadline for the video, as a duration: 90, 90s, 5m or 1h (at most a day). Past it the generation fails with deadline_exceeded, as with deadline_seconds (the sooner wins). */
                "Cancel-After"?: components["parameters"]["CancelAfter"];
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["GenerateRequest"];
            };
        };
        responses: {
            /** @description Accepted: the generation as created (or, with Prefer: wait, as it is when the answer comes). */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location: components["headers"]["Location"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Generation"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            /** @description not-found: image.upload_id names no upload of this account. */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            /** @description validation-error: a field is invalid (one entry per field in errors; for a routed request that no provider can make, one per provider and reason); provider-unavailable: that provider is not enabled here (errors names provider); idempotency-key-reused: the key was used before with a different body. */
            422: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ValidationProblem"] | components["schemas"]["Problem"];
                };
            };
            /** @description budget-exceeded: the generation would pass one of the account's or the key's budgets (named in budget and api_key_id, with what is left and when it resets); nothing was written. rate-limited: the account's request quota is spent. */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] | components["schemas"]["BudgetProblem"];
                };
            };
            /** @description store-unavailable: the store could not be reached in time (within about twice VIDEOGEN_API_STORE_TIMEOUT_SECONDS); the generation may or may not have been created, so retry with the same Idempotency-Key, which makes it at most once. */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getGeneration: {
        parameters: {
            query?: never;
            header?: {
                /** @description wait=N (RFC 7240): answer once the generation is finished, or after N seconds (at most 60; more counts as 60), whichever is first. Other preferences, and a malformed one, are ignored. */
                Prefer?: components["parameters"]["PreferWait"];
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The generation's id. */
                id: components["parameters"]["GenerationId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The generation. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Generation"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    deleteGeneration: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The generation's id. */
                id: components["parameters"]["GenerationId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted (or deleted before). */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            /** @description generation-busy: it kept changing; try again. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            429: components["responses"]["RateLimited"];
        };
    };
    listGenerations: {
        parameters: {
            query?: {
                /** @description Only these statuses: repeat the parameter or separate values with commas. */
                status?: components["parameters"]["GenerationStatus"];
                /** @description Only these providers: repeat the parameter or separate values with commas. */
                provider?: components["parameters"]["GenerationProvider"];
                /** @description Only those created after this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
                created_after?: components["parameters"]["CreatedAfter"];
                /** @description Only those created before this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
                created_before?: components["parameters"]["CreatedBefore"];
                /** @description metadata[KEY]=VALUE: only those whose metadata has exactly VALUE under KEY; several must all match. */
                metadata?: components["parameters"]["Metadata"];
                /** @description Page size, 1 to 100. */
                limit?: components["parameters"]["Limit"];
                /** @description The next_cursor of the previous page, as returned. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of generations. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GenerationList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    cancelGeneration: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The generation's id. */
                id: components["parameters"]["GenerationId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The canceled generation. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Generation"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            /** @description generation-terminal: it has already finished; generation-busy: it kept changing; try again. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            429: components["responses"]["RateLimited"];
        };
    };
    listBatches: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: components["parameters"]["Limit"];
                /** @description The next_cursor of the previous page, as returned. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of batches. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    createBatch: {
        parameters: {
            query?: {
                /** @description With a JSONL body: as on_invalid in a JSON body. */
                on_invalid?: components["parameters"]["BatchOnInvalid"];
                /** @description With a JSONL body: as item_events in a JSON body. */
                item_events?: components["parameters"]["BatchItemEvents"];
                /** @description With a JSONL body: metadata[KEY]=VALUE, the batch's metadata. */
                metadata?: components["parameters"]["BatchMetadata"];
            };
            header?: {
                /** @description Makes the request safe to repeat: the same key with the same body replays the first answer; with another body it is a 422. Kept as long as the generation. Printable ASCII; spaces at either end are not part of it (HTTP drops them). */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BatchRequest"];
            };
        };
        responses: {
            /** @description Accepted: the batch as created. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location: components["headers"]["Location"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Batch"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            /** @description validation-error: the batch's options are invalid, or (with on_invalid refuse) items are: items lists the first 100 by index and custom_id, invalid_count counts them; idempotency-key-reused: the key was used before with a different body. */
            422: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["BatchProblem"] | components["schemas"]["ValidationProblem"] | components["schemas"]["Problem"];
                };
            };
            429: components["responses"]["RateLimited"];
        };
    };
    getBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The batch's id. */
                id: components["parameters"]["BatchId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The batch. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Batch"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    listBatchGenerations: {
        parameters: {
            query?: {
                /** @description Only these statuses: repeat the parameter or separate values with commas. */
                status?: components["parameters"]["GenerationStatus"];
                /** @description Only the item with this custom_id. */
                custom_id?: components["parameters"]["BatchCustomId"];
                /** @description Page size, 1 to 100. */
                limit?: components["parameters"]["Limit"];
                /** @description The next_cursor of the previous page, as returned. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The batch's id. */
                id: components["parameters"]["BatchId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the batch's generations. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchGenerationList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    getBatchResults: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The batch's id. */
                id: components["parameters"]["BatchId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The results, one JSON object per line. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/jsonl": string;
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    cancelBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The batch's id. */
                id: components["parameters"]["BatchId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The batch, how many items were canceled and which could not be. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchCancel"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            /** @description batch-finished: every item has ended already; batch-validating. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            429: components["responses"]["RateLimited"];
        };
    };
    streamGenerationEvents: {
        parameters: {
            query?: never;
            header?: {
                /** @description The id of the last event received, to resume a stream: only newer changes come. */
                "Last-Event-ID"?: components["parameters"]["LastEventId"];
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The generation's id. */
                id: components["parameters"]["GenerationId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": {
                        id: string;
                        /** @constant */
                        event: "generation";
                        data: string;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            /** @description rate-limited: the account's request quota is spent; too-many-streams: the account holds as many event streams open here as it may. */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listProviders: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The providers. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            429: components["responses"]["RateLimited"];
        };
    };
    listModels: {
        parameters: {
            query?: {
                /** @description Only this provider's models. */
                provider?: components["parameters"]["ModelProvider"];
                /** @description true: only models that take a first frame; false: only those that do not. */
                image_to_video?: components["parameters"]["ModelImageToVideo"];
                /** @description true: only models that make a video from text alone; false: only the others. */
                text_to_video?: components["parameters"]["ModelTextToVideo"];
                /** @description Only models that make a video at least this many seconds long. */
                duration?: components["parameters"]["ModelDuration"];
                /** @description Only models that make this aspect ratio. */
                aspect_ratio?: components["parameters"]["ModelAspectRatio"];
                /** @description Only models that make this resolution. */
                resolution?: components["parameters"]["ModelResolution"];
                /** @description true: only models that take a seed; false: only the others. */
                seed?: components["parameters"]["ModelSeed"];
                /** @description true: only models that take a negative prompt; false: only the others. */
                negative_prompt?: components["parameters"]["ModelNegativePrompt"];
                /** @description true: only the models of providers this deployment offers; false: only the others. */
                enabled?: components["parameters"]["ModelEnabled"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The models that match every filter given, each provider's together. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    createUpload: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "image/png": string;
                "image/jpeg": string;
                "image/webp": string;
                "multipart/form-data": {
                    file: string;
                };
            };
        };
        responses: {
            /** @description Created: the upload. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Upload"];
                };
            };
            /** @description malformed-form: the multipart form does not parse. */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            /** @description payload-too-large: the image is over the deployment's limit (VIDEOGEN_IMAGE_MAX_BYTES). */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description unsupported-media-type: neither an image type nor multipart/form-data. */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    getUpload: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The upload's id. */
                id: components["parameters"]["UploadId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The upload. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Upload"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    deleteUpload: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The upload's id. */
                id: components["parameters"]["UploadId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoints. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            429: components["responses"]["RateLimited"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookCreate"];
            };
        };
        responses: {
            /** @description Created. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location: components["headers"]["Location"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookCreated"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            /** @description webhook-limit: the account has as many endpoints as allowed. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The webhook endpoint's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The webhook endpoint's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The webhook endpoint's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookUpdate"];
            };
        };
        responses: {
            /** @description The changed endpoint. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The webhook endpoint's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The new secret. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RotatedSecret"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            /** @description conflict: the secret was rotated concurrently; try again. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            429: components["responses"]["RateLimited"];
        };
    };
    listDeliveries: {
        parameters: {
            query?: {
                /** @description Only deliveries in this status. */
                status?: components["parameters"]["DeliveryStatus"];
                /** @description Only deliveries of this event type, such as video.completed, video.failed, video.processing, video.progress, video.deleted, webhook.disabled, account.budget_threshold, batch.completed, webhook.test. */
                event_type?: components["parameters"]["EventType"];
                /** @description Only those created after this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
                created_after?: components["parameters"]["CreatedAfter"];
                /** @description Only those created before this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
                created_before?: components["parameters"]["CreatedBefore"];
                /** @description Page size, 1 to 100. */
                limit?: components["parameters"]["Limit"];
                /** @description The next_cursor of the previous page, as returned. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The webhook endpoint's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    getDelivery: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The delivery's id. */
                id: components["parameters"]["DeliveryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    retryDelivery: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The delivery's id. */
                id: components["parameters"]["DeliveryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted: the queued delivery. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            /** @description delivery-pending: it is already queued; endpoint-disabled: the endpoint is disabled (re-enable it with PATCH active: true first); endpoint-deleted: its endpoint was deleted. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            429: components["responses"]["RateLimited"];
        };
    };
    recoverDeliveries: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The webhook endpoint's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecoverRequest"];
            };
        };
        responses: {
            /** @description Accepted: how many were queued. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Recovered"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            /** @description endpoint-disabled: the endpoint is disabled (re-enable it with PATCH active: true first); endpoint-deleted: its endpoint was deleted. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    sendTestEvent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The webhook endpoint's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted: the queued delivery. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location: components["headers"]["Location"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            /** @description endpoint-disabled: the endpoint is disabled (re-enable it with PATCH active: true first); endpoint-deleted: its endpoint was deleted. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            429: components["responses"]["RateLimited"];
        };
    };
    listEvents: {
        parameters: {
            query?: {
                /** @description Only events of these types: repeat the parameter or separate values with commas. */
                type?: components["parameters"]["EventTypes"];
                /** @description Only events about this generation, webhook endpoint or account (its id). */
                subject_id?: components["parameters"]["SubjectId"];
                /** @description Only those created after this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
                created_after?: components["parameters"]["CreatedAfter"];
                /** @description Only those created before this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
                created_before?: components["parameters"]["CreatedBefore"];
                /** @description Page size, 1 to 100. */
                limit?: components["parameters"]["Limit"];
                /** @description The next_cursor of the previous page, as returned. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    getEvent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The event's id. */
                id: components["parameters"]["EventId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Event"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    getUsage: {
        parameters: {
            query?: {
                /** @description The range's start (inclusive); by default 30 days before end. ISO 8601 with a time zone (write + as %2B in a URL), or a date (its midnight UTC). */
                start?: components["parameters"]["UsageStart"];
                /** @description The range's end (exclusive); by default now. ISO 8601 with a time zone (write + as %2B in a URL), or a date (its midnight UTC). */
                end?: components["parameters"]["UsageEnd"];
                /** @description Only the generations made with this API key (its id, e.g. key_…). */
                api_key_id?: components["parameters"]["ApiKeyId"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The usage. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Usage"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    getBudgets: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The budgets, and what is left of each. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Budgets"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            429: components["responses"]["RateLimited"];
        };
    };
    setBudgets: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BudgetLimits"];
            };
        };
        responses: {
            /** @description The budgets as set, and what is left of each. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Budgets"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    listApiKeys: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: components["parameters"]["Limit"];
                /** @description The next_cursor of the previous page, as returned. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of keys. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApiKeyCreate"];
            };
        };
        responses: {
            /** @description Made: the key, and its secret, shown once. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location: components["headers"]["Location"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyCreated"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            /** @description insufficient-scope: the key making the request lacks a scope this needs, or one the key asked for or acted on holds (a key gives and touches only what it holds itself); nothing was done. */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    getApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The API key's id. */
                id: components["parameters"]["KeyId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKey"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The API key's id. */
                id: components["parameters"]["KeyId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The revoked key. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKey"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description insufficient-scope: the key making the request lacks a scope this needs, or one the key asked for or acted on holds (a key gives and touches only what it holds itself); nothing was done. */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
        };
    };
    updateApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The API key's id. */
                id: components["parameters"]["KeyId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApiKeyUpdate"];
            };
        };
        responses: {
            /** @description The changed key. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKey"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            /** @description insufficient-scope: the key making the request lacks a scope this needs, or one the key asked for or acted on holds (a key gives and touches only what it holds itself); nothing was done. */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            404: components["responses"]["NotFound"];
            /** @description api-key-revoked: a revoked key cannot change. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    listAuditEvents: {
        parameters: {
            query?: {
                /** @description Only these types of change: repeat the parameter or separate values with commas. */
                type?: components["parameters"]["AuditEventType"];
                /** @description Only those created after this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
                created_after?: components["parameters"]["CreatedAfter"];
                /** @description Only those created before this time. ISO 8601 with a time zone (Z or an offset; write + as %2B in a URL); exclusive. */
                created_before?: components["parameters"]["CreatedBefore"];
                /** @description Only changes to this key, webhook endpoint or delivery (its id). */
                target_id?: components["parameters"]["TargetId"];
                /** @description Page size, 1 to 100. */
                limit?: components["parameters"]["Limit"];
                /** @description The next_cursor of the previous page, as returned. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of audit events. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditEventList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
        };
    };
    getMedia: {
        parameters: {
            query: {
                /** @description The link's expiry (seconds since the epoch), as in the signed link. */
                exp: components["parameters"]["MediaExpires"];
                /** @description The link's signature, as in the signed link. */
                sig: components["parameters"]["MediaSignature"];
            };
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The generation's id, as in the signed link. */
                folder: components["parameters"]["MediaFolder"];
                /** @description video.mp4 or thumbnail.jpg, as in the signed link. */
                file: components["parameters"]["MediaFile"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "image/jpeg": string;
                    "image/png": string;
                    "image/webp": string;
                    "video/mp4": string;
                };
            };
            /** @description The requested byte range (`Content-Range` says which). */
            206: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified: the client's copy (by `ETag` or date) is current. */
            304: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            404: components["responses"]["NotFound"];
            /** @description gone: the generation was deleted (DELETE /v1/generations/{id}), its media with it. */
            410: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description range-not-satisfiable: the range starts past the end of the file (`Content-Range: bytes *\/size`). */
            416: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    providerCallback: {
        parameters: {
            query?: never;
            header?: {
                /** @description Your id for the request, echoed in the answer's X-Request-Id when it is 1 to 128 letters, digits and . _ : - characters; otherwise one is made up. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description The provider the callback URL was given to: luma, or pika (through fal). */
                provider: components["parameters"]["CallbackProvider"];
                /** @description The task's token, as in the callback URL the provider was given. */
                token: components["parameters"]["CallbackToken"];
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Taken (whether or not it named a task we run). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CallbackReceived"];
                };
            };
            /** @description invalid-signature: a call to a fal callback URL whose signature does not verify. */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
        };
    };
}
