"""New deliveries as records (``pending_delivery``) and the usage aggregation's groups as records
(``UsageGroup``): what they are stored as, and what they are read from."""

from __future__ import annotations

from datetime import UTC, datetime

from videogen_common.deliveries import PENDING, delivery_body, delivery_id, pending_delivery
from videogen_common.records.delivery import Delivery
from videogen_common.repositories.usage import UsageGroup

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def test_a_new_delivery_is_stored_pending_due_now_under_its_pairs_id_and_read_back_unchanged() -> None:
    body = delivery_body("video.completed", "2026-11-25T12:00:00Z", {"id": "gen_1"})
    delivery = pending_delivery(
        event_id="evt_1",
        event_type="video.completed",
        webhook_id="wh_1",
        account_id="acme",
        body=body,
        now=NOW,
        generation_id="gen_1",
    )
    doc = delivery.to_doc()
    assert doc == {
        "_id": delivery_id("evt_1", "wh_1"),
        "event_id": "evt_1",
        "webhook_id": "wh_1",
        "account_id": "acme",
        "event_type": "video.completed",
        "generation_id": "gen_1",
        "body": body.decode(),
        "status": PENDING,
        "attempts": [],
        "next_attempt_at": NOW,
        "created_at": NOW,
        "updated_at": NOW,
        "trace_id": None,
        "traceparent": None,
    }
    assert Delivery.from_doc(doc) == delivery


def test_a_usage_group_is_read_from_the_aggregation_and_one_without_a_key_has_none() -> None:
    by = {"day": "2026-11-25", "provider": "mock", "status": "completed"}
    assert UsageGroup.from_group({"_id": {**by, "key": "key_1"}, "generations": 2, "seconds": 10.0}) == (
        UsageGroup("2026-11-25", "mock", "completed", "key_1", 2, 10)
    )
    assert UsageGroup.from_group({"_id": by, "generations": 1, "seconds": 5}).key is None
