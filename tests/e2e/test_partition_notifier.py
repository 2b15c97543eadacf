"""The notifier cut off (issue 36, scenario 5) — from the store, from the broker, or from one of two webhook
receivers — while the api and the orchestrator keep every link: the three services run as processes against
a broker of the test's own and the session's store, each reached only through a link, and the notifier's
connections alone are cut, silently (black-hole: bytes held, delivered on the heal) or with resets (refuse).
Generations completed meanwhile are delivered at least once to both endpoints after the heal, none lost; and
while only one receiver is cut off, the other gets every delivery without waiting for it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.support.engines import Engines
from tests.support.env import isolated_env
from tests.support.partition import Link, Mode, link_to, port_of, through
from tests.support.receivers import Received, Receiver, receiving
from tests.support.stack import Stack, generate, running_stack, subscribe
from tests.support.waiting import eventually
from videogen_common.deliveries import SUCCEEDED
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

RUN_S = 30.0  # a mock generation's own time on a loaded machine
DELIVERED_BOUND_S = 30.0  # a delivery to a reachable endpoint, from its generation's completion
HEALED_BOUND_S = 60.0  # docs/guarantees.md: every delivery made, at least once, after the heal
CREATIONS = 3
EVENT = "video.completed"
NOTIFIER_ENV = {
    # Retries a second apart, a short wait for an answer, a short pause after failures in a row: the bounds
    # above come from these, not from the production schedule's minutes and hours.
    "VIDEOGEN_WEBHOOK_RETRY_SCHEDULE": ",".join(["1"] * 60),
    "VIDEOGEN_DELIVERY_TIMEOUT_SECONDS": "2",
    "VIDEOGEN_BREAKER_COOLDOWN_SECONDS": "1",
}


@dataclass
class Setting:
    stack: Stack
    store_link: Link
    broker_link: Link
    cut_off: Receiver  # its endpoint is reached through ``receiver_link``
    receiver_link: Link
    other: Receiver  # reached directly
    hooks: list[str]


@pytest.fixture
def base_env(engines: Engines, tmp_path: Path, broker_link: Link) -> dict[str, str]:
    return {**isolated_env(engines, tmp_path / "data"), "VIDEOGEN_KAFKA_BOOTSTRAP": broker_link.address}


@pytest.fixture
async def setting(
    base_env: dict[str, str],
    common_settings: CommonSettings,
    store: Store,
    tmp_path: Path,
    broker_link: Link,
    store_link: Link,
) -> AsyncIterator[Setting]:
    env = {**NOTIFIER_ENV, "VIDEOGEN_MONGO_URL": through(store_link, base_env["VIDEOGEN_MONGO_URL"])}
    async with AsyncExitStack() as stack:
        cut_off = await stack.enter_async_context(receiving())
        other = await stack.enter_async_context(receiving())
        receiver_link = await stack.enter_async_context(link_to(port_of(cut_off.url()), name="receiver"))
        services = await stack.enter_async_context(
            running_stack(base_env, common_settings, store, tmp_path / "logs", env=env)
        )
        notifier = services.services["notifier"].proc
        assert notifier is not None
        for link in (store_link, broker_link):
            await link.name(notifier.pid, "notifier")
        async with aiohttp.ClientSession() as session:
            hooks = []
            for url in (through(receiver_link, cut_off.url()), other.url()):
                hook = await subscribe(session, services.base, services.key, url, [EVENT])
                hooks.append(hook["id"])
        yield Setting(services, store_link, broker_link, cut_off, receiver_link, other, hooks)


def _for(generation_id: str) -> Callable[[Received], bool]:
    def match(request: Received) -> bool:
        payload = orjson.loads(request.body)
        return bool(payload["event"] == EVENT and payload["data"]["id"] == generation_id)

    return match


async def _delivered(receiver: Receiver, generation_ids: list[str], timeout: float) -> None:
    await asyncio.gather(*(receiver.request_where(_for(g), timeout=timeout) for g in generation_ids))


async def _completed(store: Store, ids: list[str]) -> bool:
    found = await store.generations.count_documents({"_id": {"$in": ids}, "status": "completed"})
    return bool(found == len(ids))


@pytest.mark.parametrize("mode", [Mode.BLACK_HOLE, Mode.REFUSE])
@pytest.mark.parametrize("peer", ["store", "broker", "receiver"])
async def test_the_notifier_cut_off_delivers_every_event_at_least_once_after_the_heal_and_spares_the_others(
    setting: Setting, store: Store, peer: str, mode: Mode
) -> None:
    stack = setting.stack
    link, party = {
        "store": (setting.store_link, "notifier"),
        "broker": (setting.broker_link, "notifier"),
        "receiver": (setting.receiver_link, None),
    }[peer]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        status, first = await generate(session, stack.base, stack.key, "before the cut")
        assert status == 202, first
        for receiver in (setting.cut_off, setting.other):
            await _delivered(receiver, [first["id"]], RUN_S + DELIVERED_BOUND_S)

        link.cut(party) if mode is Mode.BLACK_HOLE else link.refuse(party)
        ids = []
        for n in range(CREATIONS):
            status, created = await generate(session, stack.base, stack.key, f"while the notifier is cut {n}")
            assert status == 202, created
            ids.append(created["id"])
        await eventually(lambda: _completed(store, ids), RUN_S, "the generations completed")
        if peer == "receiver":
            # The other endpoint gets every delivery while this one is still cut off.
            await _delivered(setting.other, ids, DELIVERED_BOUND_S)
        # The notifier has run into the cut (bytes held, or connections refused).
        await link.until(
            lambda it: it.held(party) > 0 if mode is Mode.BLACK_HOLE else it.reset_count[party] > 0,
            DELIVERED_BOUND_S,
            "the notifier's traffic stopped at the link",
        )
        link.heal(party)

    for receiver in (setting.cut_off, setting.other):
        await _delivered(receiver, ids, HEALED_BOUND_S)

    # And the store agrees: each (event, endpoint) delivery succeeded.
    async def all_succeeded() -> bool:
        done = await store.deliveries.count_documents({"generation_id": {"$in": ids}, "status": SUCCEEDED})
        return bool(done == len(ids) * len(setting.hooks))

    await eventually(all_succeeded, HEALED_BOUND_S, "every delivery recorded as succeeded")
