"""The SDK's models are field for field the API's: every property of every schema the served OpenAPI
document gives an answer is a field of the SDK model of the same name. A field added to the API and not to
the SDK fails here."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from tests.support.env import settings_for
from videogen_api.openapi import build_document
from videogen_api.settings import ApiSettings
from videogen_client import models
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
    "ApiKey": models.ApiKey,
    "ApiKeyCreated": models.ApiKeyCreated,
    "ApiKeyList": models.ApiKeyList,
    "ApiKeyBudgets": models.ApiKeyBudgets,
    "Budgets": models.Budgets,
    "BudgetRemaining": models.BudgetRemaining,
    "ScopeProblem": models.ScopeProblem,
    "BudgetProblem": models.BudgetProblem,
}


# The API's enumerations and the SDK's literal types of the same values.
ENUMS: dict[str, Any] = {
    "Status": models.Status,
    "Provider": models.Provider,
    "EventType": models.EventType,
    "AuditEventType": models.AuditEventType,
    "AuditActorType": models.AuditActorType,
    "AspectRatio": models.AspectRatio,
    "Resolution": models.Resolution,
    "Priority": models.Priority,
    "Scope": models.Scope,
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
}


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_every_field_a_request_takes_is_an_argument_of_the_sdk_method(
    name: str, schemas: dict[str, Any]
) -> None:
    arguments = set(inspect.signature(REQUESTS[name]).parameters)
    missing = properties(schemas[name], schemas) - arguments
    assert not missing, f"{REQUESTS[name].__qualname__} does not take {sorted(missing)}"


def test_create_and_wait_takes_every_field_create_takes() -> None:
    create = set(inspect.signature(AsyncGenerations.create).parameters)
    assert create <= set(inspect.signature(AsyncGenerations.create_and_wait).parameters)


@pytest.mark.parametrize("name", sorted(ENUMS))
def test_the_sdk_knows_every_value_of_the_apis_enumerations(name: str, schemas: dict[str, Any]) -> None:
    assert set(get_args(ENUMS[name])) == set(schemas[name]["enum"])


def test_every_schema_of_the_api_has_an_sdk_counterpart(schemas: dict[str, Any]) -> None:
    unknown = set(schemas) - set(REQUESTS) - set(ANSWERS) - set(ENUMS)
    assert not unknown, f"no SDK counterpart for {sorted(unknown)}"
