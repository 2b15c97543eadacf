"""The claims whose query shape depends on the engine (``Store.engine()``): on MongoDB one findAndModify, on
the embedded store (which answers findAndModify with a collection scan) a conditional update, then a read by
id. Both shapes run here against the real server, each chosen by naming the engine: they must behave alike,
with exactly one winner among concurrent claimers."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from tests.support.fakes import ManualClock
from tests.support.generations import insert_generation
from tests.support.webhooks import insert_webhook
from videogen_common.deliveries import pending_delivery
from videogen_common.repositories.deliveries import DeliveryClaims
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.repositories.webhooks import WebhookRepository
from videogen_common.store import Engine, Store

CLAIMERS = 8


@pytest.fixture(params=list(Engine))
def shaped(request: pytest.FixtureRequest, store: Store) -> Store:
    """The test's store, its repositories using the query shapes of the engine named."""
    engine: Engine = request.param
    return Store(store.db, known_engine=engine)


async def test_the_engine_is_learnt_from_the_server_once(store: Store) -> None:
    # The tests' server is the embedded one; what it answered is kept for the next call.
    assert await store.engine() is Engine.SECANTUSDB
    assert await store.engine() is Engine.SECANTUSDB
    assert await Store(store.db, known_engine=Engine.MONGODB).engine() is Engine.MONGODB


async def test_one_of_many_concurrent_lease_claims_wins_and_gets_the_leased_generation(shaped: Store) -> None:
    clock = ManualClock()
    doc = await insert_generation(shaped, clock.now())
    now, until = clock.now(), clock.now() + timedelta(seconds=30)
    leases = LeaseRepository(shaped)

    claims = await asyncio.gather(
        *(leases.claim_lease(doc["_id"], f"o{n}", now, until, f"t{n}") for n in range(CLAIMERS))
    )

    won = [claim for claim in claims if claim is not None]
    assert len(won) == 1
    [record] = won
    n = claims.index(record)
    assert (record.lease_owner, record.lease_token, record.attempts) == (f"o{n}", f"t{n}", 1)
    assert record.lease_expires_at == until


async def test_a_finished_generation_is_never_claimed(shaped: Store) -> None:
    clock = ManualClock()
    doc = await insert_generation(shaped, clock.now(), status="completed")
    claim = await LeaseRepository(shaped).claim_lease(
        doc["_id"], "o", clock.now(), clock.now() + timedelta(seconds=30), "t"
    )
    assert claim is None


async def test_one_of_many_concurrent_delivery_claims_wins_and_reads_the_delivery(shaped: Store) -> None:
    clock = ManualClock()
    now = clock.now()
    webhook_id, _ = await insert_webhook(
        shaped, "https://example.com/hook", now=now, account_id="acme", events=["video.completed"]
    )
    delivery = pending_delivery(
        event_id="evt_1",
        event_type="video.completed",
        webhook_id=webhook_id,
        account_id="acme",
        body=b'{"type": "video.completed"}',
        now=now,
    )
    await shaped.deliveries.insert_one(delivery.to_doc())
    until = now + timedelta(seconds=40)

    claims = await asyncio.gather(
        *(DeliveryClaims(shaped, f"n{n}").claim_due(delivery.id, None, until, now) for n in range(CLAIMERS))
    )

    won = [claim for claim in claims if claim is not None]
    assert len(won) == 1
    [claimed] = won
    assert (claimed.claim, claimed.next_attempt_at, claimed.body) == (
        f"n{claims.index(claimed)}",
        until,
        delivery.body,
    )
    # Claimed, it is no longer due to anyone until the claim ends.
    assert await DeliveryClaims(shaped, "late").claim_due(delivery.id, None, until, now) is None


async def test_concurrent_failures_are_each_counted_and_each_sees_its_own_count_or_a_later_one(
    shaped: Store,
) -> None:
    clock = ManualClock()
    now = clock.now()
    webhook_id, _ = await insert_webhook(
        shaped, "https://example.com/hook", now=now, account_id="acme", events=["video.completed"]
    )
    webhooks = WebhookRepository(shaped)

    healths = await asyncio.gather(*(webhooks.record_failure(webhook_id, now) for _ in range(CLAIMERS)))

    counts = [health.consecutive_failures for health in healths]
    assert max(counts) == CLAIMERS
    assert all(1 <= count <= CLAIMERS for count in counts)
    assert all(health.failing_since == now for health in healths)
    final = await webhooks.record_failure(webhook_id, now + timedelta(seconds=1))
    assert final.consecutive_failures == CLAIMERS + 1
