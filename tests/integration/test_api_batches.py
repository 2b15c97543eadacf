"""Batches against the real store and broker (POST /v1/batches and its reads, results and cancel), their items
run by the orchestrator's parts with the mock provider: array and JSONL bodies, per-item refusals by index,
skip mode, an idempotent re-send, the results file, a cancel midway, and batch.completed exactly once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import bearer
from tests.support.generations import insert_generation
from tests.support.orchestration import Orchestration
from tests.support.waiting import eventually
from videogen_common.endings import batch_event
from videogen_common.records.batch import BatchRecord
from videogen_common.repositories.batches import BatchRepository
from videogen_common.store import Store
from videogen_orchestrator.providers.mock import MockProvider

Client = TestClient[web.Request, web.Application]
Doc = dict[str, Any]


def item(n: int, **fields: Any) -> Doc:
    return {
        "prompt": f"a red fox, take {n}",
        "provider": "mock",
        "duration": 3,
        "custom_id": f"c{n}",
        **fields,
    }


async def submit(client: Client, key: str, body: Doc, headers: dict[str, str] | None = None) -> Doc:
    response = await client.post("/v1/batches", json=body, headers={**bearer(key), **(headers or {})})
    assert response.status == 202, await response.text()
    assert response.headers["Location"] == f"/v1/batches/{(await response.json())['id']}"
    found: Doc = await response.json()
    return found


async def items_of(store: Store, batch_id: str) -> list[Doc]:
    return await store.generations.find({"batch_id": batch_id}).sort("_id", 1).to_list(None)


async def test_a_json_batch_is_accepted_with_its_items_written_low_priority_in_order(
    client: Client, key: str, store: Store
) -> None:
    body = {"items": [item(i) for i in range(5)], "metadata": {"job": "nightly"}}
    batch = await submit(client, key, body)
    assert batch["status"] == "in_progress" and batch["object"] == "batch"
    assert batch["counts"] == {
        "total": 5,
        "queued": 0,
        "processing": 5,
        "completed": 0,
        "failed": 0,
        "canceled": 0,
    }
    assert batch["metadata"] == {"job": "nightly"} and batch["refused"] == []
    assert batch["estimated_cost"] is not None and batch["finished_at"] is None
    docs = await items_of(store, batch["id"])
    assert [d["custom_id"] for d in docs] == [f"c{i}" for i in range(5)]  # the ids sort in the order given
    assert {d["priority"] for d in docs} == {"low"} and {d["status"] for d in docs} == {"processing"}
    read = await client.get(f"/v1/batches/{batch['id']}", headers=bearer(key))
    assert read.status == 200 and (await read.json())["counts"]["total"] == 5


async def test_a_jsonl_batch_takes_its_options_from_the_query_string(
    client: Client, key: str, store: Store
) -> None:
    lines = b"\n".join(orjson.dumps(item(i, priority="high")) for i in range(3)) + b"\n"
    response = await client.post(
        "/v1/batches?item_events=false&metadata[run]=7",
        data=lines,
        headers={**bearer(key), "Content-Type": "application/jsonl"},
    )
    assert response.status == 202, await response.text()
    batch = await response.json()
    assert (
        batch["counts"]["total"] == 3 and batch["item_events"] is False and batch["metadata"] == {"run": "7"}
    )
    docs = await items_of(store, batch["id"])
    assert {d["priority"] for d in docs} == {"high"} and {d["item_events"] for d in docs} == {False}


async def test_invalid_items_refuse_the_batch_by_index_and_custom_id(
    client: Client, key: str, store: Store
) -> None:
    items = [item(0), item(1, duration=99), item(2), item(3, provider="nope"), item(4, custom_id="c0")]
    response = await client.post("/v1/batches", json={"items": items}, headers=bearer(key))
    assert response.status == 422
    assert response.content_type == "application/problem+json"
    problem = await response.json()
    assert problem["invalid_count"] == 3
    assert [(i["index"], i["custom_id"]) for i in problem["items"]] == [(1, "c1"), (3, "c3"), (4, "c0")]
    assert problem["items"][1]["errors"][0]["field"] == "provider"
    assert problem["items"][2]["errors"][0]["code"] == "duplicate_custom_id"
    assert [e["field"] for e in problem["errors"]] == [
        "items.1.duration",
        "items.3.provider",
        "items.4.custom_id",
    ]
    assert await store.batches.count_documents({}) == 0
    assert await store.generations.count_documents({}) == 0


async def test_skip_mode_accepts_the_valid_items_and_records_the_refusals(
    client: Client, key: str, store: Store
) -> None:
    items = [item(0), item(1, duration=99), item(2)]
    batch = await submit(client, key, {"items": items, "on_invalid": "skip"})
    assert batch["counts"]["total"] == 2
    assert [(r["index"], r["custom_id"]) for r in batch["refused"]] == [(1, "c1")]
    assert [d["custom_id"] for d in await items_of(store, batch["id"])] == ["c0", "c2"]


async def test_a_resend_under_the_same_key_answers_the_same_batch(
    client: Client, key: str, store: Store
) -> None:
    body = {"items": [item(i) for i in range(4)]}
    first = await submit(client, key, body, {"Idempotency-Key": "nightly-1"})
    again = await client.post(
        "/v1/batches", json=body, headers={**bearer(key), "Idempotency-Key": "nightly-1"}
    )
    assert again.status == 202 and again.headers["Idempotent-Replayed"] == "true"
    assert (await again.json())["id"] == first["id"]
    assert await store.generations.count_documents({}) == 4
    other = await client.post(
        "/v1/batches", json={"items": [item(9)]}, headers={**bearer(key), "Idempotency-Key": "nightly-1"}
    )
    assert other.status == 422 and (await other.json())["type"].endswith("idempotency-key-reused")


async def test_a_batch_left_validating_is_finished_by_its_resend(
    client: Client, key: str, store: Store
) -> None:
    body = {"items": [item(i) for i in range(4)]}
    first = await submit(client, key, body, {"Idempotency-Key": "k"})
    # As if the api died after the batch and two of its items were written.
    await store.batches.update_one({"_id": first["id"]}, {"$set": {"status": "validating"}})
    docs = await items_of(store, first["id"])
    await store.generations.delete_many({"_id": {"$in": [d["_id"] for d in docs[2:]]}})
    again = await submit(client, key, body, {"Idempotency-Key": "k"})
    assert again["id"] == first["id"] and again["status"] == "in_progress"
    assert [d["_id"] for d in await items_of(store, first["id"])] == [d["_id"] for d in docs]


async def test_items_run_to_the_end_the_results_file_and_batch_completed_once(
    client: Client, key: str, store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    items = [item(0), item(1), item(2, prompt="please #fail")]
    batch = await submit(client, key, {"items": items, "item_events": False})
    orchestration = Orchestration(store, base_env, tmp_path / "media", settings={"max_in_flight": 8})
    runner = orchestration.runner()
    try:
        for doc in await items_of(store, batch["id"]):
            assert await runner.start(doc["_id"])
        await asyncio.wait_for(runner.wait_idle(), 20)
    finally:
        await orchestration.stop()
    read = await (await client.get(f"/v1/batches/{batch['id']}", headers=bearer(key))).json()
    assert read["status"] == "completed" and read["finished_at"] is not None
    assert (read["counts"]["completed"], read["counts"]["failed"]) == (2, 1) and read["counts"][
        "processing"
    ] == 0
    finished = [e for e in orchestration.sink.events if e.type == "batch.completed"]
    assert len(finished) == 1 and finished[0].data["counts"] == read["counts"]
    # item_events false: no video.* event owed or published for its items
    assert not [e for e in orchestration.sink.events if e.type.startswith("video.")]
    stored = await store.batches.find_one({"_id": batch["id"]})
    assert stored is not None and [e["type"] for e in stored["outbox"]] == ["batch.completed"]
    # Ending it again makes nothing more.
    again = await BatchRepository(store).finish(
        BatchRecord.from_doc(stored), batch_event, stored["updated_at"]
    )
    assert again is None

    # A count lost (its process died between the item's end and its count): the reconciler recounts the
    # batch from its items and ends it, once.
    await store.batches.update_one(
        {"_id": batch["id"]},
        {
            "$set": {
                "status": "in_progress",
                "ended": 2,
                "outcomes": {"completed": 2, "failed": 0, "canceled": 0},
                "finished_at": None,
                "outbox": [],
                "updated_at": datetime(2000, 1, 1, tzinfo=UTC),
            },
            "$unset": {"outbox_at": ""},
        },
    )
    again_orchestration = Orchestration(store, base_env, tmp_path / "media")
    try:
        await again_orchestration.reconciler(again_orchestration.runner()).run_once()
    finally:
        await again_orchestration.stop()
    recounted = await store.batches.find_one({"_id": batch["id"]})
    assert recounted is not None and recounted["status"] == "completed" and recounted["ended"] == 3
    assert recounted["outcomes"] == {"completed": 2, "failed": 1, "canceled": 0}
    assert [e.type for e in again_orchestration.sink.events].count("batch.completed") == 1

    response = await client.get(f"/v1/batches/{batch['id']}/results", headers=bearer(key))
    assert response.status == 200 and response.content_type == "application/jsonl"
    lines = [orjson.loads(line) for line in (await response.read()).splitlines()]
    assert [line["custom_id"] for line in lines] == ["c0", "c1", "c2"]
    for line in lines:
        assert (line["status"] == "completed") == (line["video_url"] is not None)
        assert (line["status"] == "failed") == (line["error"] is not None)


async def test_cancel_midway_cancels_what_has_not_started(
    client: Client, key: str, store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    batch = await submit(client, key, {"items": [item(i) for i in range(6)]})
    docs = await items_of(store, batch["id"])
    provider = MockProvider(latency_ms=300)
    orchestration = Orchestration(
        store, base_env, tmp_path / "media", providers={"mock": provider}, settings={"max_in_flight": 8}
    )
    runner = orchestration.runner()
    try:
        for doc in docs[:2]:
            assert await runner.start(doc["_id"])

        async def submitted() -> bool:
            found = await store.generations.count_documents(
                {"batch_id": batch["id"], "provider_task_id": {"$ne": None}}
            )
            return found == 2

        await eventually(submitted)
        response = await client.post(f"/v1/batches/{batch['id']}/cancel", headers=bearer(key))
        assert response.status == 200, await response.text()
        answer = await response.json()
        assert answer["canceled"] == 4 and sorted(answer["not_canceled"]) == sorted(
            d["_id"] for d in docs[:2]
        )
        assert answer["batch"]["status"] == "canceling" and answer["batch"]["counts"]["canceled"] == 4
        await asyncio.wait_for(runner.wait_idle(), 20)
    finally:
        await orchestration.stop()
    read = await (await client.get(f"/v1/batches/{batch['id']}", headers=bearer(key))).json()
    assert read["status"] == "canceled"
    assert read["counts"]["canceled"] == 4 and read["counts"]["completed"] == 2
    listed = await client.get(
        f"/v1/batches/{batch['id']}/generations?status=failed&limit=3", headers=bearer(key)
    )
    page = await listed.json()
    assert len(page["data"]) == 3 and page["next_cursor"] is not None
    assert {g["error"]["code"] for g in page["data"]} == {"canceled"}
    assert all(g["batch_id"] == batch["id"] for g in page["data"])
    one = await client.get(f"/v1/batches/{batch['id']}/generations?custom_id=c5", headers=bearer(key))
    assert [g["custom_id"] for g in (await one.json())["data"]] == ["c5"]
    again = await client.post(f"/v1/batches/{batch['id']}/cancel", headers=bearer(key))
    assert again.status == 409


async def test_batches_are_listed_newest_first(client: Client, key: str, other_key: str) -> None:
    first = await submit(client, key, {"items": [item(0)]})
    second = await submit(client, key, {"items": [item(1)]})
    await submit(client, other_key, {"items": [item(2)]})
    listed = await (await client.get("/v1/batches?limit=1", headers=bearer(key))).json()
    assert [b["id"] for b in listed["data"]] == [second["id"]]
    rest = await client.get(f"/v1/batches?limit=5&cursor={listed['next_cursor']}", headers=bearer(key))
    assert [b["id"] for b in (await rest.json())["data"]] == [first["id"]]
    foreign = await client.get(f"/v1/batches/{first['id']}", headers=bearer(other_key))
    assert foreign.status == 404


async def test_ten_thousand_items_are_accepted_in_one_request(client: Client, key: str, store: Store) -> None:
    lines = b"\n".join(orjson.dumps(item(i)) for i in range(10_000))
    response = await client.post(
        "/v1/batches", data=lines, headers={**bearer(key), "Content-Type": "application/jsonl"}
    )
    assert response.status == 202, await response.text()
    batch = await response.json()
    assert batch["counts"]["total"] == 10_000 and batch["status"] == "in_progress"
    assert await store.generations.count_documents({"batch_id": batch["id"]}) == 10_000


async def test_a_budget_reached_mid_batch_refuses_the_items_past_it(
    client: Client, key: str, store: Store
) -> None:
    response = await client.put("/v1/budgets", json={"daily_video_seconds": 7}, headers=bearer(key))
    assert response.status == 200, await response.text()
    items = [item(i) for i in range(3)]  # 3 s each: two fit in 7
    refused = await client.post("/v1/batches", json={"items": items}, headers=bearer(key))
    assert refused.status == 422
    problem = await refused.json()
    assert [(i["index"], i["errors"][0]["code"]) for i in problem["items"]] == [(2, "budget_exceeded")]
    remaining = (await (await client.get("/v1/budgets", headers=bearer(key))).json())["remaining"]
    assert remaining[0]["used"] == 0  # refused whole: nothing stays reserved
    batch = await submit(client, key, {"items": items, "on_invalid": "skip"})
    assert batch["counts"]["total"] == 2 and [r["index"] for r in batch["refused"]] == [2]
    remaining = (await (await client.get("/v1/budgets", headers=bearer(key))).json())["remaining"]
    assert remaining[0]["used"] == 6
    assert [d["custom_id"] for d in await items_of(store, batch["id"])] == ["c0", "c1"]


async def test_a_batch_left_validating_without_a_key_is_settled_by_the_reconciler_past_its_bound(
    client: Client, key: str, store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    """As a crashed api leaves them (the batch written ``validating``, then its api gone): one with two of its
    three items written, one with none. Within the bound the reconciler leaves both alone; past it, the first
    runs the items written and ends completed, the second ends failed, each told once."""
    orchestration = Orchestration(store, base_env, tmp_path / "media")
    clock = orchestration.clock
    batches = BatchRepository(store)
    now = clock.now()

    def validating(batch_id: str, total: int) -> BatchRecord:
        return BatchRecord(
            id=batch_id, account_id="acme", status="validating", created_at=now, updated_at=now, total=total
        )

    await batches.insert(validating("bat_partly", 3))
    await batches.insert(validating("bat_nothing", 2))
    for n in range(2):
        await insert_generation(
            store,
            now,
            generation_id=f"gen_partly{n}",
            batch_id="bat_partly",
            custom_id=f"c{n}",
            priority="low",
        )
    runner = orchestration.runner()
    reconciler = orchestration.reconciler(runner)
    try:
        # Within the bound (5 minutes): a batch maybe still being written.
        clock.advance(timedelta(seconds=299))
        await reconciler.run_once()
        assert {d["status"] for d in await store.batches.find({}).to_list(None)} == {"validating"}

        clock.advance(timedelta(seconds=2))
        await reconciler.run_once()  # past it: both settled (and the items written, never leased, started)
        nothing = await (await client.get("/v1/batches/bat_nothing", headers=bearer(key))).json()
        assert nothing["status"] == "failed" and nothing["finished_at"] is not None
        assert nothing["counts"]["total"] == 0 and nothing["error"]["code"] == "batch_not_written"
        partly = await (await client.get("/v1/batches/bat_partly", headers=bearer(key))).json()
        assert partly["status"] in ("in_progress", "completed")
        assert partly["counts"]["total"] == 2 and partly["error"]["code"] == "items_not_written"
        assert "2 of its 3 items" in partly["error"]["message"]
        await asyncio.wait_for(runner.wait_idle(), 20)
        await reconciler.run_once()  # a second pass settles nothing twice
    finally:
        await orchestration.stop()
    partly = await (await client.get("/v1/batches/bat_partly", headers=bearer(key))).json()
    assert partly["status"] == "completed" and partly["counts"]["completed"] == 2
    told = [e for e in orchestration.sink.events if e.type == "batch.completed"]
    assert sorted((e.data["id"], e.data["status"]) for e in told) == [
        ("bat_nothing", "failed"),
        ("bat_partly", "completed"),
    ]
    results = await client.get("/v1/batches/bat_partly/results", headers=bearer(key))
    assert [orjson.loads(line)["custom_id"] for line in (await results.read()).splitlines()] == ["c0", "c1"]


async def test_a_resend_after_the_reconciler_settled_the_batch_answers_it_as_settled(
    client: Client, key: str, store: Store, base_env: dict[str, str], tmp_path: Path
) -> None:
    body = {"items": [item(i) for i in range(3)]}
    first = await submit(client, key, body, {"Idempotency-Key": "late"})
    # As if the api died after the batch and one of its items were written, and stayed gone past the bound.
    long_ago = datetime(2000, 1, 1, tzinfo=UTC)
    await store.batches.update_one(
        {"_id": first["id"]}, {"$set": {"status": "validating", "updated_at": long_ago}}
    )
    docs = await items_of(store, first["id"])
    await store.generations.delete_many({"_id": {"$in": [d["_id"] for d in docs[1:]]}})
    orchestration = Orchestration(store, base_env, tmp_path / "media")
    try:
        await orchestration.reconciler(orchestration.runner()).run_once()
    finally:
        await orchestration.stop()
    again = await client.post("/v1/batches", json=body, headers={**bearer(key), "Idempotency-Key": "late"})
    assert again.status == 202 and again.headers["Idempotent-Replayed"] == "true"
    settled = await again.json()
    assert settled["id"] == first["id"] and settled["counts"]["total"] == 1
    assert settled["error"]["code"] == "items_not_written"
    assert await store.generations.count_documents({"batch_id": first["id"]}) == 1
