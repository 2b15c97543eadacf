"""GET /v1/generations filters (status, provider, created_after, created_before) against the real store:
alone, combined, and with cursor paging while new generations keep arriving."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta, timezone
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client, bearer
from tests.support.env import settings_for
from tests.support.fakes import ManualClock
from videogen_api.settings import ApiSettings
from videogen_common.domain import Status
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store
from videogen_common.topics import Topics

Client = TestClient[web.Request, web.Application]
VALID = {"prompt": "a red fox running through snow", "provider": "mock", "duration": 5}
SECOND = timedelta(seconds=1)


@pytest.fixture
def api_settings(base_env: dict[str, str]) -> ApiSettings:
    """A deployment that offers every provider (VIDEOGEN_PROVIDERS): generations of each are made here."""
    return settings_for(ApiSettings, base_env, api_port=0, providers="mock,runway,luma,pika")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def clocked(
    api_settings: ApiSettings, store: Store, topics: Topics, clock: ManualClock
) -> AsyncIterator[Client]:
    """The api on a hand-moved clock, so creation times are exact (and can tie)."""
    async with api_client(api_settings, clock=clock) as client:
        yield client


async def create(client: Client, key: str, **fields: Any) -> dict[str, Any]:
    response = await client.post("/v1/generate", json={**VALID, **fields}, headers=bearer(key))
    assert response.status == 202, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def move(store: Store, generation_id: str, target: Status) -> None:
    """Move a fresh (processing) generation to ``target`` the way the orchestrator would."""
    doc = await store.generations.find_one({"_id": generation_id})
    assert doc is not None
    assert await GenerationRepository(store).transition(doc, target, now=doc["updated_at"]) is not None


async def listed(client: Client, key: str, params: Any) -> list[str]:
    """Every id the listing returns for ``params``, following the cursor to the end."""
    ids: list[str] = []
    cursor: str | None = None
    while True:
        query = [*params, *([("cursor", cursor)] if cursor else [])]
        response = await client.get("/v1/generations", params=query, headers=bearer(key))
        assert response.status == 200, await response.text()
        page = await response.json()
        ids += [g["id"] for g in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return ids


def newest_first(generations: list[dict[str, Any]]) -> list[str]:
    return [g["id"] for g in sorted(generations, key=lambda g: (g["created_at"], g["id"]), reverse=True)]


async def test_status_filter_takes_one_value_repeated_values_or_a_comma_separated_list(
    client: Client, key: str, store: Store
) -> None:
    made = {status: [await create(client, key) for _ in range(2)] for status in Status}
    for status, generations in made.items():
        if status is not Status.PROCESSING:
            for g in generations:
                await move(store, g["id"], status)

    for status in Status:
        assert await listed(client, key, [("status", status.value)]) == newest_first(made[status])
    done = newest_first(made[Status.COMPLETED] + made[Status.FAILED])
    assert await listed(client, key, [("status", "completed"), ("status", "failed")]) == done
    assert await listed(client, key, [("status", "failed,completed")]) == done
    assert await listed(client, key, [("status", " completed , failed,completed")]) == done
    assert await listed(client, key, [("status", "completed,failed"), ("limit", "1")]) == done


async def test_provider_filter_alone_and_combined_with_status(client: Client, key: str, store: Store) -> None:
    mock = [await create(client, key, provider="mock") for _ in range(3)]
    luma = [await create(client, key, provider="luma") for _ in range(2)]
    runway = await create(client, key, provider="runway")
    await move(store, mock[0]["id"], Status.COMPLETED)
    await move(store, luma[0]["id"], Status.COMPLETED)

    assert await listed(client, key, [("provider", "luma")]) == newest_first(luma)
    assert await listed(client, key, [("provider", "luma,runway")]) == newest_first([*luma, runway])
    assert await listed(client, key, [("provider", "pika")]) == []
    assert await listed(client, key, [("provider", "mock"), ("status", "completed")]) == [mock[0]["id"]]
    assert await listed(client, key, [("provider", "mock,luma"), ("status", "processing")]) == newest_first(
        [*mock[1:], *luma[1:]]
    )


async def test_created_after_and_before_are_exclusive_bounds_given_in_any_time_zone(
    clocked: Client, key: str, clock: ManualClock
) -> None:
    t0 = clock.now()
    made = []
    for _ in range(4):
        made.append(await create(clocked, key))
        clock.advance(SECOND)
    ids = [g["id"] for g in made]
    t1, t2, t3 = t0 + SECOND, t0 + 2 * SECOND, t0 + 3 * SECOND
    plus2 = timezone(timedelta(hours=2))

    def at(moment: Any) -> str:
        return str(moment.astimezone(plus2).isoformat())  # e.g. 2026-11-21T10:47:01.123000+02:00

    assert await listed(clocked, key, [("created_after", at(t1))]) == [ids[3], ids[2]]
    assert await listed(clocked, key, [("created_before", at(t2))]) == [ids[1], ids[0]]
    assert await listed(clocked, key, [("created_after", at(t0)), ("created_before", at(t3))]) == [
        ids[2],
        ids[1],
    ]
    zulu = t1.isoformat().replace("+00:00", "Z")
    assert await listed(clocked, key, [("created_after", zulu), ("created_before", zulu)]) == []
    # Bounds finer than the store's milliseconds still select exactly what lies strictly inside them.
    half_ms = timedelta(microseconds=500)
    assert await listed(clocked, key, [("created_before", at(t1 + half_ms))]) == [ids[1], ids[0]]
    assert await listed(clocked, key, [("created_after", at(t1 - half_ms))]) == [ids[3], ids[2], ids[1]]
    assert await listed(clocked, key, [("created_after", at(t1 + half_ms))]) == [ids[3], ids[2]]


async def test_filters_never_reach_another_account(client: Client, key: str, other_key: str) -> None:
    mine = await create(client, key, provider="pika")
    await create(client, other_key, provider="pika")
    assert await listed(client, key, [("provider", "pika"), ("status", "processing")]) == [mine["id"]]


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ([("status", "done")], ["status"]),
        ([("status", "")], ["status"]),
        ([("status", "completed,")], ["status"]),
        ([("status", "COMPLETED")], ["status"]),
        ([("provider", "sora")], ["provider"]),
        ([("created_after", "yesterday")], ["created_after"]),
        ([("created_after", "2026-11-21T08:47:00")], ["created_after"]),  # no time zone
        ([("created_before", "2026-11-21")], ["created_before"]),
        ([("created_before", "2026-11-21T08:47:00 02:00")], ["created_before"]),  # an unescaped +
        ([("created_before", "0001-01-01T00:00:00+01:00")], ["created_before"]),  # before year 1 in UTC
        (
            [("created_after", "2026-11-21T08:47:00Z"), ("created_after", "2026-11-22T08:47:00Z")],
            ["created_after"],
        ),
        (
            [("created_after", "2026-11-21T08:47:01Z"), ("created_before", "2026-11-21T08:47:00Z")],
            ["created_after"],
        ),
        (
            [("status", "nope"), ("provider", "nope"), ("created_before", "nope")],
            ["status", "provider", "created_before"],
        ),
    ],
)
async def test_bad_filters_are_one_422_naming_every_bad_parameter(
    client: Client, key: str, params: list[tuple[str, str]], fields: list[str]
) -> None:
    await create(client, key)
    response = await client.get("/v1/generations", params=params, headers=bearer(key))
    assert response.status == 422
    assert response.content_type == "application/problem+json"
    problem = await response.json()
    assert problem["type"] == "urn:videogen:problem:validation-error"
    assert [e["field"] for e in problem["errors"]] == fields


async def test_a_filtered_walk_never_repeats_or_skips_and_ignores_generations_created_during_it(
    clocked: Client, key: str, other_key: str, store: Store, clock: ManualClock
) -> None:
    made = []
    for i in range(12):
        # Several share a creation time, so ties are broken by id across page boundaries.
        if i % 3 == 0:
            clock.advance(timedelta(milliseconds=7))
        made.append(await create(clocked, key, provider="luma" if i % 4 == 0 else "mock"))
    for g in made[1::3]:
        await move(store, g["id"], Status.FAILED)
    await create(clocked, other_key)
    wanted = [g for g in made if g["provider"] == "mock" and g not in made[1::3]]
    expected = newest_first(wanted)
    assert len(expected) == 6
    params = [("status", "processing,queued"), ("provider", "mock"), ("limit", "2")]

    seen: list[str] = []
    arrived: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = [*params, *([("cursor", cursor)] if cursor else [])]
        page = await (await clocked.get("/v1/generations", params=query, headers=bearer(key))).json()
        seen += [g["id"] for g in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
        # New matching generations arrive between pages; they are newer than the walk's position.
        clock.advance(timedelta(milliseconds=1))
        arrived += [await create(clocked, key) for _ in range(2)]

    assert seen == expected
    assert len(set(seen)) == len(seen)
    assert len(arrived) == 4 and not {g["id"] for g in arrived} & set(seen)
    # A fresh walk sees them, newest first, ahead of the rest.
    assert await listed(clocked, key, params) == [*newest_first(arrived), *expected]


async def test_a_cursor_holds_only_a_position_so_other_filters_continue_from_it(
    clocked: Client, key: str, store: Store, clock: ManualClock
) -> None:
    made = []
    for _ in range(4):
        made.append(await create(clocked, key))
        clock.advance(SECOND)
    await move(store, made[0]["id"], Status.COMPLETED)
    await move(store, made[2]["id"], Status.COMPLETED)

    first = await (
        await clocked.get(
            "/v1/generations", params={"status": "processing", "limit": "1"}, headers=bearer(key)
        )
    ).json()
    assert [g["id"] for g in first["data"]] == [made[3]["id"]]
    unfiltered = await (
        await clocked.get("/v1/generations", params={"cursor": first["next_cursor"]}, headers=bearer(key))
    ).json()
    assert [g["id"] for g in unfiltered["data"]] == [made[2]["id"], made[1]["id"], made[0]["id"]]
