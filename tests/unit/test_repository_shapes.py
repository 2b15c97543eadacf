"""The query shapes the repositories choose because of the embedded store (each named in its repository):
they stay within what their index answers, so the embedded store serves them without a scan, and they ask
for nothing the caller then has to do differently on MongoDB 7."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pymongo import IndexModel

from videogen_common.deliveries import PENDING
from videogen_common.repositories import audit, deliveries, events, generation_reads, paging, usage, webhooks

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def index_fields(models: list[IndexModel], name: str) -> list[str]:
    [model] = [m for m in models if m.document["name"] == name]
    return list(model.document["key"])


def test_the_sweep_reads_the_due_range_of_by_due_and_nothing_beside_it() -> None:
    query = deliveries.due_range(NOW)
    assert list(query) == index_fields(deliveries.INDEXES, "by_due")
    assert query == {"status": PENDING, "next_attempt_at": {"$lte": NOW}}


def test_a_claim_is_a_condition_by_id_on_a_due_delivery_with_the_attempts_it_read() -> None:
    assert deliveries.claim_filter("msg_1", NOW, None) == {
        "_id": "msg_1",
        "status": PENDING,
        "next_attempt_at": {"$lte": NOW},
    }
    assert deliveries.claim_filter("msg_1", NOW, 2)["attempts"] == {"$size": 2}


def test_routing_reads_an_accounts_endpoints_by_the_account_alone() -> None:
    assert webhooks.by_account_only("acme") == {"account_id": "acme"}
    assert index_fields(webhooks.INDEXES, "by_account")[0] == "account_id"
    # What the query leaves out is checked after the read, so it must be read.
    assert {"active", "events"} <= set(webhooks.SUBSCRIPTION_FIELDS)


def test_usage_reads_the_range_of_by_account_alone() -> None:
    start = NOW.replace(day=1)
    query = usage.of_range("acme", start, NOW)
    assert list(query) == index_fields(generation_reads.INDEXES, "by_account")[:2]
    assert query["created_at"] == {"$gte": start, "$lt": NOW}


@pytest.mark.parametrize(
    ("models", "index", "equalities"),
    [
        (generation_reads.INDEXES, "by_account", ["account_id"]),
        (generation_reads.INDEXES, "by_account_status", ["account_id", "status"]),
        (events.INDEXES, "by_account", ["account_id"]),
        (events.INDEXES, "by_type", ["account_id", "type"]),
        (events.INDEXES, "by_subject", ["account_id", "subject_id"]),
        (audit.INDEXES, "by_account", ["account_id"]),
        (deliveries.INDEXES, "by_webhook", ["webhook_id"]),
        (deliveries.INDEXES, "by_webhook_status", ["webhook_id", "status"]),
    ],
)
def test_each_listing_window_is_an_index_s_equalities_then_a_range_of_created_at(
    models: list[IndexModel], index: str, equalities: list[str]
) -> None:
    # A window (paging.newest_first) is {<these equalities>, created_at: <a range>}: exactly the leading
    # fields of the index, the one shape the embedded store serves by a range of it.
    assert index_fields(models, index)[: len(equalities) + 1] == [*equalities, "created_at"]
    assert set(paging.window_range((NOW, True), (NOW, False))) == {"$gte", "$lt"}
    assert paging.window_range(None, (NOW, True)) == {"$lte": NOW}
