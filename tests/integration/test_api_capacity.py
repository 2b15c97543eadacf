"""What the api tells of admission: a waiting generation's reason and its place in its account's line (read
alone; null in lists), and GET /v1/providers' capacity of each provider and key, as the orchestrator's
admission keeps them in the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import bearer
from tests.support.env import settings_for
from videogen_common.clock import SystemClock
from videogen_common.records.admission import ProviderPool
from videogen_common.repositories.leases import LeaseRepository
from videogen_common.repositories.provider_pools import ProviderPoolRepository
from videogen_common.store import Store
from videogen_orchestrator.admission import Admission
from videogen_orchestrator.assembly import admission_for
from videogen_orchestrator.settings import OrchestratorSettings

Client = TestClient[web.Request, web.Application]


async def _create(client: Client, key: str, **fields: Any) -> str:
    body = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5, **fields}
    response = await client.post("/v1/generate", json=body, headers=bearer(key))
    assert response.status == 202, await response.text()
    generation_id: str = (await response.json())["id"]
    return generation_id


async def _put_in_line(store: Store, admission: Admission, generation_id: str) -> None:
    """What an orchestrator does with a generation it claimed and could not start."""
    now = datetime.now(UTC)
    record = await LeaseRepository(store).claim_lease(
        generation_id, "orch-a", now, now + timedelta(seconds=30), f"token-{generation_id}"
    )
    assert record is not None
    assert await admission.wait(record, "provider_capacity") is not None


async def test_a_waiting_generation_shows_why_and_its_place_in_its_accounts_line(
    client: Client, key: str, other_key: str, store: Store, base_env: dict[str, str]
) -> None:
    admission = admission_for(settings_for(OrchestratorSettings, base_env), store, SystemClock())
    theirs = await _create(client, other_key)
    ours = [await _create(client, key) for _ in range(3)]
    urgent = await _create(client, key, priority="high")
    for generation_id in [theirs, *ours, urgent]:
        await _put_in_line(store, admission, generation_id)

    places = {}
    for generation_id in [*ours, urgent]:
        response = await client.get(f"/v1/generations/{generation_id}", headers=bearer(key))
        body = await response.json()
        assert (body["status"], body["queue_reason"]) == ("queued", "provider_capacity")
        places[generation_id] = body["queue_position"]

    # The high-priority one is first in our line; the other account's does not count in ours.
    assert [places[gid] for gid in [urgent, *ours]] == [1, 2, 3, 4]
    theirs_body = await (await client.get(f"/v1/generations/{theirs}", headers=bearer(other_key))).json()
    assert theirs_body["queue_position"] == 1
    listed = await (await client.get("/v1/generations", headers=bearer(key))).json()
    assert {g["queue_position"] for g in listed["data"]} == {None}  # counted only when read alone
    assert {g["priority"] for g in listed["data"]} == {"normal", "high"}


async def test_providers_show_each_keys_limit_load_and_whats_waiting(
    client: Client, key: str, store: Store, base_env: dict[str, str]
) -> None:
    admission = admission_for(settings_for(OrchestratorSettings, base_env), store, SystemClock())
    pools = ProviderPoolRepository(store)
    now = datetime.now(UTC)
    # Two Runway keys, as an orchestrator with VIDEOGEN_RUNWAY_API_KEYS registers them, one of them lowered
    # and paused after a refusal; the mock without a limit.
    tier3 = await pools.register(ProviderPool("runway/tier3", "runway", "tier3", 5, 5))
    tier5 = await pools.register(ProviderPool("runway/tier5", "runway", "tier5", 20, 20))
    await pools.register(ProviderPool("mock", "mock", None, None, None))
    assert await pools.take(tier3, "gen_a", "acme", now)
    assert await pools.take(tier5, "gen_b", "acme", now)
    assert await pools.take(tier5, "gen_c", "globex", now)
    await pools.refused("runway/tier3", now, retry_after=600)
    for _ in range(2):
        await _put_in_line(store, admission, await _create(client, key))

    response = await client.get("/v1/providers", headers=bearer(key))
    assert response.status == 200
    by_id = {p["id"]: p["capacity"] for p in (await response.json())["data"]}

    runway = by_id["runway"]
    assert (runway["limit"], runway["effective_limit"], runway["running"], runway["waiting"]) == (
        25,
        22,
        3,
        0,
    )
    [three, five] = runway["keys"]
    assert (three["name"], three["limit"], three["effective_limit"], three["running"]) == ("tier3", 5, 2, 1)
    assert three["paused_until"] is not None
    assert (five["name"], five["effective_limit"], five["running"], five["paused_until"]) == (
        "tier5",
        20,
        2,
        None,
    )
    mock = by_id["mock"]
    assert (mock["limit"], mock["effective_limit"], mock["running"], mock["waiting"]) == (None, None, 0, 2)
    assert by_id["luma"] is None and by_id["pika"] is None  # no orchestrator has offered them


def _load(capacity: dict[str, Any]) -> tuple[int | None, int | None, int]:
    return capacity["limit"], capacity["effective_limit"], capacity["running"]
