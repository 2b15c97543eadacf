"""The query shapes the repositories choose because of the embedded store (each named in its repository):
they stay within what their index answers, so the embedded store serves them without a scan, and they ask
for nothing the caller then has to do differently on MongoDB 7."""

from __future__ import annotations

from datetime import UTC, datetime

from pymongo import IndexModel

from videogen_common.deliveries import PENDING
from videogen_common.repositories import deliveries, webhooks

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
