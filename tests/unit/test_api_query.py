"""videogen_api.query: one parser for every query string, and the OpenAPI parameters generated from the same
models."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from multidict import MultiDict

from videogen_api.filters import GenerationFilters
from videogen_api.problems import Problem
from videogen_api.query import parameters, parse_query
from videogen_api.routes.audit import AuditListing
from videogen_api.routes.deliveries import DeliveryListing
from videogen_api.routes.media import MediaLink
from videogen_api.routes.usage import UsageQuery


def errors(
    model: type[GenerationFilters | DeliveryListing | AuditListing], query: MultiDict[str]
) -> list[str]:
    with pytest.raises(Problem) as info:
        parse_query(model, query)
    assert info.value.status == 422
    return [f"{e['field']}:{e['code']}" for e in info.value.extensions["errors"]]


def test_every_bad_parameter_is_one_entry_in_field_order() -> None:
    query = MultiDict(
        [
            ("cursor", "nope"),
            ("metadata[bad key]", "x"),
            ("metadata[bad key]", "y"),
            ("metadata[k]", "1"),
            ("metadata[k]", "2"),
            ("created_before", "2026-01-01T00:00:00Z"),
            ("created_after", "2026-01-02T00:00:00Z"),
            ("limit", "0"),
        ]
    )
    assert errors(GenerationFilters, query) == [
        "created_after:range",
        "metadata[bad key]:metadata_key",
        "metadata[k]:metadata_value",
    ]


def test_paging_is_judged_once_the_filters_are_well_formed_one_parameter_at_a_time() -> None:
    assert errors(AuditListing, MultiDict([("limit", "0"), ("cursor", "nope"), ("type", "x")])) == [
        "type:enum"
    ]
    assert errors(AuditListing, MultiDict([("limit", "0"), ("cursor", "nope")])) == ["limit:limit"]
    assert errors(AuditListing, MultiDict([("cursor", "nope")])) == ["cursor:cursor"]


def test_single_valued_parameters_given_twice_are_refused() -> None:
    twice = MultiDict(
        [("status", "failed"), ("status", "pending"), ("event_type", "a.b"), ("event_type", "a.c")]
    )
    assert errors(DeliveryListing, twice) == ["status:repeated", "event_type:repeated"]
    assert errors(AuditListing, MultiDict([("target_id", "a"), ("target_id", "b")])) == ["target_id:repeated"]


def test_unknown_parameters_are_ignored_and_limit_and_cursor_take_the_first_value() -> None:
    listing = parse_query(DeliveryListing, MultiDict([("x", "1"), ("limit", "5"), ("limit", "0")]))
    assert (listing.limit, listing.cursor, listing.to_filter().clause()) == (5, None, {})


def test_the_usage_range_is_checked_against_the_time_given() -> None:
    now = datetime(2026, 11, 21, tzinfo=UTC)
    usage = parse_query(UsageQuery, MultiDict([("start", "2026-11-01")]), now=now)
    assert usage.range(now) == (datetime(2026, 11, 1, tzinfo=UTC), now)
    with pytest.raises(Problem) as info:
        parse_query(UsageQuery, MultiDict([("start", "2026-11-22")]), now=now)
    assert info.value.extensions["errors"] == [
        {"field": "start", "message": "must be earlier than end", "code": "range"}
    ]


def test_a_malformed_media_link_is_not_a_422() -> None:
    link = parse_query(MediaLink, MultiDict([("exp", "soon")]))
    assert (link.exp, link.sig) == (None, "")


def test_the_documented_parameters_are_the_models_fields() -> None:
    documented = parameters(GenerationFilters)
    assert [p["name"] for p in documented.values()] == [
        "status",
        "provider",
        "created_after",
        "created_before",
        "metadata",
        "limit",
        "cursor",
    ]
    assert documented["Metadata"]["style"] == "deepObject"
    assert parameters(MediaLink)["MediaExpires"]["required"] is True
    assert parameters(DeliveryListing)["CreatedAfter"] == documented["CreatedAfter"]
