"""The SDK's models are field for field the API's: every property of every schema the served OpenAPI
document gives an answer is a field of the SDK model of the same name, and the SDK knows every value of each
of the API's enumerations (``videogen_client.enums``, its one home for them). A field or value added to the
API and not to the SDK fails here. Enums stay open: an answer with values the SDK does not know reads, each
kept as a string."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from tests.support.env import settings_for
from videogen_api.openapi import build_document
from videogen_api.settings import ApiSettings
from videogen_client import enums, models
from videogen_client.resources import batches
from videogen_client.resources.generations import AsyncGenerations
from videogen_client.resources.keys import AsyncApiKeys, AsyncBudgets
from videogen_client.resources.webhooks import AsyncWebhooks

# The API's answer schemas and the SDK model that reads each.
ANSWERS: dict[str, type[BaseModel]] = {
    "Generation": models.Generation,
    "GenerationError": models.GenerationError,
    "TimelineStep": models.TimelineStep,
    "GenerationList": models.GenerationList,
    "Webhook": models.Webhook,
    "WebhookCreated": models.WebhookCreated,
    "WebhookList": models.WebhookList,
    "RotatedSecret": models.RotatedSecret,
    "Delivery": models.Delivery,
    "DeliveryAttempt": models.DeliveryAttempt,
    "DeliveryList": models.DeliveryList,
    "Recovered": models.Recovered,
    "Usage": models.Usage,
    "UsageRow": models.UsageRow,
    "UsageTotals": models.UsageTotals,
    "KeyUsage": models.KeyUsage,
    "AuditEvent": models.AuditEvent,
    "AuditActor": models.AuditActor,
    "AuditTarget": models.AuditTarget,
    "AuditEventList": models.AuditEventList,
    "Problem": models.Problem,
    "ValidationProblem": models.Problem,
    "FieldError": models.FieldError,
    "ProviderList": models.ProviderList,
    "ProviderInfo": models.ProviderInfo,
    "ProviderCapabilities": models.ProviderCapabilities,
    "ProviderCapacity": models.ProviderCapacity,
    "ProviderKeyCapacity": models.ProviderKeyCapacity,
    "GenerationImage": models.GenerationImage,
    "ImageInput": models.ImageInput,
    "Upload": models.Upload,
    "Event": models.Event,
    "EventList": models.EventList,
    "EventSubject": models.EventSubject,
    "ApiKey": models.ApiKey,
    "ApiKeyCreated": models.ApiKeyCreated,
    "ApiKeyList": models.ApiKeyList,
    "ApiKeyBudgets": models.ApiKeyBudgets,
    "Budgets": models.Budgets,
    "BudgetRemaining": models.BudgetRemaining,
    "ScopeProblem": models.ScopeProblem,
    "BudgetProblem": models.BudgetProblem,
    "GenerationRoute": models.GenerationRoute,
    "RouteCandidate": models.RouteCandidate,
    "GenerationAttempt": models.GenerationAttempt,
    "ProviderHealth": models.ProviderHealth,
    "ProviderPrice": models.ProviderPrice,
    "ModelInfo": models.ModelInfo,
    "ModelList": models.ModelList,
    "ModelPrice": models.ModelPrice,
    "ProviderCost": models.ProviderCost,
    "ModelCost": models.ModelCost,
    "RoutingOptions": models.RoutingOptions,
    "Batch": batches.Batch,
    "BatchCounts": batches.BatchCounts,
    "BatchError": batches.BatchError,
    "BatchList": batches.BatchList,
    "BatchGeneration": batches.BatchGeneration,
    "BatchGenerationList": batches.BatchGenerationList,
    "BatchCancel": batches.BatchCancel,
    "BatchProblem": batches.BatchProblem,
    "RefusedItem": batches.RefusedItem,
    "ItemError": batches.ItemError,
}


# The API's enumerations and the SDK's literal types of the same values.
ENUMS: dict[str, Any] = {
    "Status": enums.Status,
    "Provider": enums.Provider,
    "EventType": enums.EventType,
    "SubjectType": enums.SubjectType,
    "ErrorCode": enums.ErrorCode,
    "QueueReason": enums.QueueReason,
    "AuditEventType": enums.AuditEventType,
    "AuditActorType": enums.AuditActorType,
    "AspectRatio": enums.AspectRatio,
    "Resolution": enums.Resolution,
    "Priority": enums.Priority,
    "Scope": enums.Scope,
    "Sort": enums.Sort,
    "Breaker": enums.Breaker,
}


@pytest.fixture(scope="module")
def schemas() -> dict[str, Any]:
    document = build_document(settings_for(ApiSettings, {}))
    found: dict[str, Any] = document["components"]["schemas"]
    return found


def properties(schema: dict[str, Any], everything: dict[str, Any]) -> set[str]:
    names = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        ref = part.get("$ref")
        names |= properties(everything[ref.rsplit("/", 1)[1]] if ref else part, everything)
    return names


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_every_field_the_api_answers_with_is_a_field_of_the_sdk_model(
    name: str, schemas: dict[str, Any]
) -> None:
    assert name in schemas, f"the API no longer has a {name} schema: update ANSWERS and the SDK"
    missing = properties(schemas[name], schemas) - set(ANSWERS[name].model_fields)
    assert not missing, f"{ANSWERS[name].__name__} lacks {sorted(missing)}"


# The API's request bodies and the SDK method whose keyword arguments carry each one's fields.
REQUESTS: dict[str, Callable[..., Any]] = {
    "GenerateRequest": AsyncGenerations.create,
    "WebhookCreate": AsyncWebhooks.create,
    "WebhookUpdate": AsyncWebhooks.update,
    "RecoverRequest": AsyncWebhooks.recover,
    "ApiKeyCreate": AsyncApiKeys.create,
    "ApiKeyUpdate": AsyncApiKeys.update,
    "BudgetLimits": AsyncBudgets.set,
    "BatchRequest": batches.AsyncBatches.create,
}


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_every_field_a_request_takes_is_an_argument_of_the_sdk_method(
    name: str, schemas: dict[str, Any]
) -> None:
    arguments = set(inspect.signature(REQUESTS[name]).parameters)
    missing = properties(schemas[name], schemas) - arguments
    assert not missing, f"{REQUESTS[name].__qualname__} does not take {sorted(missing)}"


def test_a_batch_item_is_what_create_takes_and_its_custom_id(schemas: dict[str, Any]) -> None:
    missing = properties(schemas["BatchItem"], schemas) - set(batches.BatchItem.__annotations__)
    assert not missing, f"the SDK's BatchItem lacks {sorted(missing)}"


def test_create_and_wait_takes_every_field_create_takes() -> None:
    create = set(inspect.signature(AsyncGenerations.create).parameters)
    assert create <= set(inspect.signature(AsyncGenerations.create_and_wait).parameters)


@pytest.mark.parametrize("name", sorted(ENUMS))
def test_the_sdk_knows_every_value_of_the_apis_enumerations(name: str, schemas: dict[str, Any]) -> None:
    assert set(get_args(ENUMS[name])) == set(schemas[name]["enum"])


# The answers of routes no tenant calls: the providers' callbacks (Luma, fal) are answered CallbackReceived.
NOT_FOR_TENANTS = {"CallbackReceived"}


def test_every_schema_of_the_api_has_an_sdk_counterpart(schemas: dict[str, Any]) -> None:
    unknown = set(schemas) - set(REQUESTS) - set(ANSWERS) - set(ENUMS) - {"BatchItem"} - NOT_FOR_TENANTS
    assert not unknown, f"no SDK counterpart for {sorted(unknown)}"


def test_the_lists_the_sdk_keeps_inline_are_the_apis_too(schemas: dict[str, Any]) -> None:
    """The closed lists the document states inline rather than as components."""
    assert set(get_args(enums.DeliveryStatus)) == set(schemas["Delivery"]["properties"]["status"]["enum"])
    assert set(get_args(enums.ImageType)) == set(schemas["Upload"]["properties"]["content_type"]["enum"])


# --- open enums ---------------------------------------------------------------------------------------------

# Answers of a newer server: every closed list holds a value this SDK has never heard of.
NEWER_GENERATION = {
    "id": "gen_01",
    "status": "rendering",
    "prompt": "a fox",
    "provider": "sora",
    "model": "sora-2",
    "duration": 5,
    "video_url": None,
    "thumbnail_url": None,
    "error": {"code": "quota_exceeded", "message": "m", "provider_code": None, "retriable": True},
    "progress": None,
    "queue_reason": "gpu_shortage",
    "queue_position": 3,
    "priority": "urgent",
    "timeline": [{"status": "rendering", "at": "2026-11-21T08:47:00Z"}],
    "aspect_ratio": "7:3",
    "resolution": "8k",
    "seed": None,
    "negative_prompt": None,
    "metadata": {},
    "image": None,
    "route": {
        "requested": "auto",
        "sort": "greenest",
        "fallback_on_failure": False,
        "candidates": [{"provider": "sora", "model": "sora-2", "reason": "auto"}],
        "skipped": [{"provider": "veo", "model": None, "reason": "not enabled"}],
        "reason": "sora first",
    },
    "attempts": [
        {
            "provider": "sora",
            "model": "sora-2",
            "started_at": "2026-11-21T08:47:00Z",
            "ended_at": None,
            "error_code": "quota_exceeded",
            "cost": None,
        }
    ],
    "estimated_cost": 0.5,
    "cost": None,
    "created_at": "2026-11-21T08:47:00Z",
    "updated_at": "2026-11-21T08:47:00Z",
    "deleted": False,
    "deleted_at": None,
    "a_field_from_later": {"kept": True},
}
NEWER_ANSWERS: dict[str, tuple[type[BaseModel], dict[str, Any]]] = {
    "generation": (models.Generation, NEWER_GENERATION),
    "webhook": (
        models.Webhook,
        {
            "id": "wh_1",
            "url": "https://example.test/h",
            "events": ["video.completed", "video.deleted", "account.budget_threshold"],
            "active": True,
            "disabled_reason": None,
            "created_at": "2026-11-21T08:47:00Z",
            "updated_at": "2026-11-21T08:47:00Z",
        },
    ),
    "event": (
        models.EventList,
        {
            "data": [
                {
                    "id": "evt_acc_1_budget_80",
                    "type": "account.budget_threshold",
                    "subject": {"type": "api_key", "id": "key_1"},
                    "data": {"threshold": 80},
                    "created_at": "2026-11-21T08:47:00Z",
                }
            ],
            "next_cursor": None,
        },
    ),
    "delivery": (
        models.Delivery,
        {
            "id": "msg_1",
            "webhook_id": "wh_1",
            "event_id": "evt_1",
            "event_type": "video.deleted",
            "generation_id": None,
            "status": "expired",
            "failure_reason": None,
            "attempts": [],
            "next_attempt_at": None,
            "created_at": "2026-11-21T08:47:00Z",
            "updated_at": "2026-11-21T08:47:00Z",
        },
    ),
    "providers": (
        models.ProviderList,
        {
            "data": [
                {
                    "id": "sora",
                    "enabled": True,
                    "capabilities": {
                        "durations": [4, 8],
                        "aspect_ratios": ["7:3"],
                        "resolutions": ["8k"],
                        "default_resolution": "8k",
                        "image_input": True,
                        "seed": False,
                        "negative_prompt": False,
                    },
                    "capacity": None,
                    "health": {
                        "state": "maintenance",
                        "breaker": "ajar",
                        "success_rate": None,
                        "p50_seconds": None,
                        "samples": 0,
                    },
                    "model": "sora-2",
                    "models": [
                        {
                            "provider": "sora",
                            "id": "sora-2",
                            "default": True,
                            "enabled": True,
                            "description": "",
                            "durations": [4, 8],
                            "aspect_ratios": ["7:3"],
                            "resolutions": ["8k"],
                            "default_resolution": "8k",
                            "text_to_video": True,
                            "image_to_video": True,
                            "seed": False,
                            "negative_prompt": False,
                            "prices": [{"resolution": "8k", "usd_per_second": 0.5}],
                        }
                    ],
                    "prices": [{"model": "sora-2", "resolution": "8k", "usd_per_second": 0.5}],
                }
            ]
        },
    ),
    "api_key": (
        models.ApiKey,
        {
            "id": "key_1",
            "name": "n",
            "scopes": ["generations:read", "videos:delete"],
            "prefix": "vg_live",
            "last_four": "abcd",
            "budgets": {
                "daily_video_seconds": None,
                "monthly_video_seconds": None,
                "daily_cost": None,
                "monthly_cost": 12.5,
            },
            "created_at": "2026-11-21T08:47:00Z",
            "last_used_at": None,
            "expires_at": None,
            "revoked_at": None,
        },
    ),
    "budget": (
        models.BudgetRemaining,
        {
            "api_key_id": None,
            "budget": "daily_tokens",
            "limit": 10,
            "used": 1,
            "remaining": 9,
            "period_start": "2026-11-21T00:00:00Z",
            "resets_at": "2026-11-22T00:00:00Z",
        },
    ),
    "audit": (
        models.AuditEvent,
        {
            "id": "aud_1",
            "type": "api_key.rotated",
            "actor": {"type": "robot", "id": None},
            "target": {"type": "api_key", "id": "key_1"},
            "data": {},
            "request_id": None,
            "created_at": "2026-11-21T08:47:00Z",
        },
    ),
    "usage": (
        models.UsageRow,
        {
            "date": "2026-11-21",
            "provider": "sora",
            "status": "rendering",
            "generations": 1,
            "seconds": 5,
            "video_seconds": 0,
            "cost": 0.0,
        },
    ),
    "upload": (
        models.Upload,
        {
            "id": "upl_1",
            "content_type": "image/avif",
            "bytes": 10,
            "width": 1,
            "height": 1,
            "created_at": "2026-11-21T08:47:00Z",
            "expires_at": "2026-11-22T08:47:00Z",
        },
    ),
}


@pytest.mark.parametrize("name", sorted(NEWER_ANSWERS))
def test_an_answer_with_values_the_sdk_does_not_know_reads_and_keeps_them_as_strings(name: str) -> None:
    model, answer = NEWER_ANSWERS[name]
    read = model.model_validate_json(json.dumps(answer))
    # Every value comes back as sent: nothing refused, nothing coerced into a known one.
    assert read.model_dump(mode="json") == answer


def test_a_generation_in_an_unknown_state_is_not_taken_for_a_finished_one() -> None:
    generation = models.Generation.model_validate(NEWER_GENERATION)
    assert generation.status == "rendering" and not generation.terminal
    assert generation.error is not None and generation.error.code == "quota_exceeded"
    assert generation.model_extra == {"a_field_from_later": {"kept": True}}
