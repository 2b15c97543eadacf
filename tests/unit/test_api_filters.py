"""videogen_api.filters and the pure parts of videogen_api.idempotency."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from multidict import MultiDict

from videogen_api.filters import GenerationFilters
from videogen_api.idempotency import request_hash, scoped
from videogen_api.problems import Problem
from videogen_api.query import parse_query
from videogen_api.schemas.common import parse_body
from videogen_api.schemas.generations import GenerateRequest
from videogen_common.domain import Provider, Status


def test_no_filters_is_an_empty_clause() -> None:
    assert parse_query(GenerationFilters, MultiDict()) == GenerationFilters()
    assert GenerationFilters().to_filter().clause() == {}


def test_values_are_deduplicated_in_first_seen_order() -> None:
    filters = parse_query(
        GenerationFilters,
        MultiDict([("status", "failed,completed"), ("status", "failed"), ("provider", "pika")]),
    )
    assert filters.statuses == (Status.FAILED, Status.COMPLETED)
    assert filters.to_filter().clause() == {
        "status": {"$in": ["failed", "completed"]},
        "provider": {"$in": ["pika"]},
    }
    assert filters.providers == (Provider.PIKA,)


def test_time_bounds_become_utc_and_round_outwards_to_milliseconds() -> None:
    filters = parse_query(
        GenerationFilters,
        MultiDict(
            [
                ("created_after", "2026-11-21T10:47:00.123456+02:00"),
                ("created_before", "2026-11-21T08:48:00.000001Z"),
            ]
        ),
    )
    assert filters.created_after == datetime(2026, 11, 21, 8, 47, 0, 123456, tzinfo=UTC)
    assert filters.to_filter().clause() == {
        "created_at": {
            "$gt": datetime(2026, 11, 21, 8, 47, 0, 123000, tzinfo=UTC),
            "$lt": datetime(2026, 11, 21, 8, 48, 0, 1000, tzinfo=UTC),
        }
    }


def test_a_bound_at_the_end_of_time_does_not_overflow() -> None:
    filters = parse_query(GenerationFilters, MultiDict([("created_before", "9999-12-31T23:59:59.9999999Z")]))
    assert filters.to_filter().clause()["created_at"]["$lt"] == datetime(
        9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC
    )


def test_every_bad_parameter_is_reported_at_once() -> None:
    with pytest.raises(Problem) as info:
        parse_query(
            GenerationFilters, MultiDict([("status", "x"), ("provider", "y"), ("created_after", "z")])
        )
    assert info.value.status == 422
    assert [e["field"] for e in info.value.extensions["errors"]] == ["status", "provider", "created_after"]


def test_request_hash_ignores_field_order_and_spacing() -> None:
    a = parse_body(GenerateRequest, b'{"prompt": "p", "provider": "mock", "duration": 5}')
    b = parse_body(GenerateRequest, b'{ "duration":5,"provider" :"mock","prompt":"p"}')
    c = parse_body(GenerateRequest, b'{"prompt": "p", "provider": "mock", "duration": 6}')
    assert request_hash(a) == request_hash(b) != request_hash(c)
    assert len(request_hash(a)) == 64


def test_scoped_key_is_per_account() -> None:
    assert scoped("acme", "k") == "acme\nk" != scoped("globex", "k")
