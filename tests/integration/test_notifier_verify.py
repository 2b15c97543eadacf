"""The customer's verify helper (the SDK's videogen_client.webhooks.verify) against what a real Dispatcher
sends to a real receiver on 127.0.0.1: an ordinary delivery, a retry, a replay, and a secret rotation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from tests.integration.test_notifier_breaker import Harness
from tests.support.fakes import ManualClock
from tests.support.receivers import OK, Received, Reply, always, replies
from videogen_client.webhooks import WebhookVerificationError, verify
from videogen_common.signing import new_webhook_secret
from videogen_common.store import Store


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime.now(UTC))


@pytest.fixture
async def h(base_env: dict[str, str], store: Store, clock: ManualClock) -> AsyncIterator[Harness]:
    async with AsyncExitStack() as stack:
        yield Harness(base_env, store, clock, stack)


def check(secret: str, request: Received, now: datetime) -> dict[str, object]:
    return verify(secret, request.headers, request.body, now=now)


async def test_verify_accepts_what_a_real_dispatcher_sends_and_returns_its_payload(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher()
    _, secret = await h.webhook(receiver.url())
    [delivery_id] = await h.publish(dispatcher)
    request = await receiver.request(1)

    payload = check(secret, request, clock.now())
    assert payload == orjson.loads((await h.delivery(delivery_id))["body"])
    assert payload["event"] == "video.completed"
    with pytest.raises(WebhookVerificationError, match="no webhook-signature matches"):
        check(new_webhook_secret(), request, clock.now())


async def test_during_a_rotation_a_delivery_verifies_with_either_live_secret_and_not_an_expired_one(
    h: Harness, store: Store, clock: ManualClock
) -> None:
    receiver = await h.receiver(always(OK))
    dispatcher = await h.dispatcher()
    webhook_id, old = await h.webhook(receiver.url())
    new, retired = new_webhook_secret(), new_webhook_secret()
    now = clock.now()
    # Newest first, as the api keeps them: the new secret, the old one still live for a day, one expired.
    await store.webhooks.update_one(
        {"_id": webhook_id},
        {
            "$set": {
                "secrets": [
                    {"secret": new, "created_at": now, "expires_at": None},
                    {"secret": old, "created_at": now, "expires_at": now + timedelta(days=1)},
                    {"secret": retired, "created_at": now, "expires_at": now - timedelta(seconds=1)},
                ]
            }
        },
    )
    await h.publish(dispatcher)
    request = await receiver.request(1)

    assert len(request.headers["webhook-signature"].split(" ")) == 2
    assert len(request.headers["X-Service-Signature"].split(" ")) == 2
    assert check(new, request, clock.now()) == check(old, request, clock.now())
    with pytest.raises(WebhookVerificationError):
        check(retired, request, clock.now())


async def test_a_delivery_replayed_after_the_tolerance_is_refused_but_each_retry_is_signed_afresh(
    h: Harness, clock: ManualClock
) -> None:
    receiver = await h.receiver(replies(Reply(500)))
    dispatcher = await h.dispatcher(webhook_retry_schedule="600")
    _, secret = await h.webhook(receiver.url())
    await h.publish(dispatcher)
    first = await receiver.request(1)
    await dispatcher.wait_idle()

    clock.advance(timedelta(seconds=600))
    await dispatcher.sweep()
    second = await receiver.request(2)

    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert first.body == second.body
    assert check(secret, second, clock.now()) == orjson.loads(second.body)
    with pytest.raises(WebhookVerificationError, match=r"60[01] s old, more than the 300 s tolerance"):
        check(secret, first, clock.now())  # the first attempt, captured and replayed ten minutes later
