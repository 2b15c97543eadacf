from __future__ import annotations

from pydantic import Field

from videogen_common.settings import CommonSettings


class ApiSettings(CommonSettings):
    api_host: str = "127.0.0.1"
    api_port: int = Field(default=8080, ge=0, le=65535)
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    # POST /v1/batches's body (up to 10,000 items): its own cap.
    batch_max_body_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    prompt_max_chars: int = Field(default=2000, ge=1)
    # Production requires https webhook URLs; the dev stack allows plain http (and loopback).
    webhook_allow_http: bool = False
    # Valid API keys are cached this long: a key revoked (or its scopes or budgets changed) through another
    # replica keeps its old standing here for at most this many seconds. An expired key stops at once.
    api_key_cache_seconds: float = Field(default=5.0, ge=0, le=60)
    # An account's budgets are cached this long: a change reaches every other replica within it.
    budget_cache_seconds: float = Field(default=5.0, ge=0, le=60)
    # What routing reads of the providers (their keys' capacity and health) is cached this long per replica.
    provider_state_cache_seconds: float = Field(default=2.0, ge=0, le=60)
    # A budget's use reaching this share of its limit is announced once per period (budget_alerts).
    budget_threshold_percent: int = Field(default=80, ge=1, le=100)
    # A publish the broker has not acknowledged within this long counts as failed (logged, counted, /readyz
    # degraded). Creation never waits for it (the document is already durable, and the orchestrator's
    # reconciler picks up any request whose message never arrived); a cancel waits at most this long.
    publish_timeout_seconds: float = Field(default=2.0, gt=0)
    # Every call the api makes to the store gives up after this long (connecting, selecting the server and
    # waiting for its answer included): a request that needs the store while it is unreachable or silent (a
    # partition) answers 503 store-unavailable within about twice this (docs/guarantees.md), not after the
    # driver's own 30 s, and readiness is false.
    api_store_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    # On SIGTERM the api reports not-ready on /readyz but keeps serving this long, so load balancers (and
    # Kubernetes endpoints) stop routing to it before it stops accepting connections.
    shutdown_drain_seconds: float = Field(default=5.0, ge=0)
    # Then requests already in flight get this long to finish; any still running are cancelled.
    shutdown_timeout_seconds: float = Field(default=10.0, gt=0)
    # Event streams (GET /v1/generations/{id}/events) one account may hold open on one api process; beyond:
    # 429 too-many-streams.
    event_streams_per_account: int = Field(default=100, ge=1)
    # Requests waiting on generations here (streams, Prefer: wait) get them re-read this often, all in one
    # query: what they could not hear of on the status topic reaches them this much later at most.
    status_recheck_seconds: float = Field(default=5.0, gt=0)
    # An upload (POST /v1/uploads) can be used as a first frame for this long after it is made.
    upload_retention_seconds: float = Field(default=86400.0, gt=0)
    # Webhook endpoints one account may register (POST /v1/webhooks answers 409 webhook-limit beyond it).
    max_webhooks_per_account: int = Field(default=20, ge=1)
    # After a secret rotation the previous secret keeps signing (alongside the new one) this long.
    webhook_secret_overlap_seconds: float = Field(default=86400.0, ge=0)
    # How far back POST /v1/webhooks/{id}/recover may reach.
    webhook_recover_window_seconds: float = Field(default=14 * 86400.0, gt=0)
    # Per-account request rate limits, each a quota per fixed window, counted across every replica (see
    # docs/api.md, "Limits"). POST /v1/generate spends the "generate" budget; every other authenticated
    # request spends the "default" one. Beyond it: 429 rate-limited with Retry-After.
    rate_limit_enabled: bool = True
    rate_limit_generate_quota: int = Field(default=50, ge=1)
    rate_limit_generate_window_seconds: int = Field(default=1, ge=1)
    rate_limit_default_quota: int = Field(default=100, ge=1)
    rate_limit_default_window_seconds: int = Field(default=1, ge=1)
    # Each replica adds what it admitted to the shared counts and reads them back this often, and admits at
    # most this share of a quota between two such syncs: N replicas together overshoot a quota by at most
    # (N - 1) x that share.
    rate_limit_sync_seconds: float = Field(default=0.25, gt=0)
    rate_limit_local_share: float = Field(default=0.1, gt=0, le=1)
    # fal signs its webhook calls (POST /v1/provider-callbacks/pika/...) with ED25519 keys it publishes as a
    # JWKS here. The keys are kept fal_jwks_cache_seconds; a signature no kept key verifies fetches them
    # again, at most once per fal_jwks_refetch_seconds.
    fal_jwks_url: str = "https://rest.alpha.fal.ai/.well-known/jwks.json"
    fal_jwks_cache_seconds: float = Field(default=86400.0, gt=0)
    fal_jwks_refetch_seconds: float = Field(default=60.0, ge=0)
