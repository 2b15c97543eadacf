"""A batch does not slow another tenant down (issue 39's fairness proof): processes over the real broker and
store, a fake of Runway's API that runs at most ``LIMIT`` tasks at once (a real HTTP server on 127.0.0.1),
``VIDEOGEN_RUNWAY_MAX_CONCURRENCY`` set to the same number, and two accounts.

Account ``acme`` sends single requests, ``CLIENTS`` clients one after the other each (within its fair share of
the provider: half the limit, with two accounts waiting). They are timed first alone, then while account
``bulk``'s batch of ``BATCH`` items keeps the provider full. In fair turn (admission: a freed slot goes to
the waiting account with the fewest running there) a single waits for the next slot to free, not behind the
batch: its time from creation to completion with the batch present is within 1.5 times its time alone at the
median, and its 90th percentile (of 12: the second slowest, one draw from the tail) within twice. The tasks
are slow enough (``TASK_S``) that the time is the provider's, not the machine's, and vary in length as a
provider's do (``_task_seconds``); the singles meet the batch once it runs (its requests sent, its first round
of tasks turned over), not in the seconds before its first slot frees."""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.support.orchestrator_stack import Stack, orchestrator_stack
from tests.support.pipeline import call
from tests.support.topic_reads import Record, topic_records
from tests.support.waiting import eventually
from videogen.keys import create_key
from videogen_common.settings import CommonSettings
from videogen_common.store import Store
from videogen_common.topics import Topics

pytestmark = pytest.mark.e2e

log = logging.getLogger(__name__)

Doc = dict[str, Any]

LIMIT = 8
TASK_S = 10.0
CLIENTS = 3  # the single requests in flight at once: within the account's fair share (LIMIT / 2)
PER_CLIENT = 4  # each client's singles, one after the other: 12 timed per phase
BATCH = 2000
BOUND = 1.5  # the median's
TAIL_BOUND = 2.0  # the 90th percentile's: a starved single (60 s and more before the intake) fails it at once
BULK = "bulk item "
_SPREAD = 0.618034  # the golden ratio's fraction: its multiples spread evenly over [0, 1)


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    """Migrations, a key of ``acme``, a fake Runway limited to ``LIMIT`` tasks at once and the api as a
    process; the test starts its orchestrator."""
    async with orchestrator_stack(
        base_env,
        common_settings,
        store,
        tmp_path,
        task_seconds=TASK_S,
        lease_seconds=10.0,
        env={"VIDEOGEN_RUNWAY_MAX_CONCURRENCY": str(LIMIT)},
    ) as s:
        s.runway.max_running = LIMIT
        s.runway.task_seconds_for = _task_seconds
        yield s


def _task_seconds(body: dict[str, Any]) -> float:
    """How long a task runs: a provider's times vary. The batch's items between half and one and a half
    times ``TASK_S``, spread evenly (its slots free at spread times, not in rounds); the singles between 0.8
    and 1.2 times, the same for the same single in both phases (the clients drift apart, as independent ones
    would, instead of finishing and coming back all at once)."""
    prompt = str(body.get("promptText"))
    if prompt.startswith(BULK):
        return TASK_S * (0.5 + (int(prompt.removeprefix(BULK)) * _SPREAD) % 1.0)
    client, single = (int(part) for part in prompt.rsplit(" ", 1)[-1].split("."))
    return TASK_S * (0.8 + 0.4 * ((client * PER_CLIENT + single) * _SPREAD % 1.0))


def _at(doc: Doc, moment: str) -> Any:
    """When the generation was created, submitted to the provider (its slot taken) or completed."""
    if moment == "completed":
        return next(step["at"] for step in doc["timeline"] if step["status"] == "completed")
    return doc[moment]


async def _singles(stack: Stack, tag: str) -> list[Doc]:
    """``CLIENTS`` clients of ``acme``, each sending ``PER_CLIENT`` single requests one after the other (the
    next once the last completed); returns the generations as they ended."""
    ended: list[Doc] = []

    async def client(n: int, session: aiohttp.ClientSession) -> None:
        for i in range(PER_CLIENT):
            body = {"prompt": f"{tag} {n}.{i}", "provider": "runway", "duration": 5}
            status, created = await call(session, "POST", f"{stack.base}/v1/generate", stack.key, body)
            assert status == 202, created
            ids = [created["id"]]
            await eventually(partial(stack.all_terminal, ids), 60, f"{tag} {n}.{i} finished")
            ended.extend(await stack.docs(ids))

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(client(n, session) for n in range(CLIENTS)))
    assert [d["status"] for d in ended] == ["completed"] * len(ended), [d.get("error") for d in ended]
    return ended


def _seconds(docs: list[Doc], since: str, until: str) -> list[float]:
    return sorted((_at(d, until) - _at(d, since)).total_seconds() for d in docs)


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


async def test_a_batch_of_two_thousand_does_not_slow_another_accounts_single_requests(
    stack: Stack, store: Store, common_settings: CommonSettings
) -> None:
    bulk_key = await create_key(store, "bulk")
    orchestrator = stack.orchestrator("orch-1")
    await stack.ready(orchestrator)

    # Alone: the provider is free, a single starts at once.
    alone = await _singles(stack, "alone")

    # The batch, one POST; its requests on their topic (the api sends them in the background after the
    # answer: the time they take to leave is not what is measured); then the provider full of it.
    started = time.monotonic()
    items = [{"prompt": f"{BULK}{i}", "provider": "runway", "duration": 5} for i in range(BATCH)]
    batch = await stack.batch(items, key=bulk_key, item_events=False)
    accepted_s = time.monotonic() - started

    def all_sent(records: list[Record]) -> bool:
        return sum(b'"account_id":"bulk"' in record.value for record in records) >= BATCH

    topic = Topics(common_settings.topic_prefix).requested
    await topic_records(common_settings.kafka_bootstrap, topic, all_sent, timeout=60)

    async def provider_full() -> bool:
        return stack.runway.running_now() == LIMIT

    await eventually(provider_full, 60, "the batch filling the provider")

    # ... and turning over: its first tasks, started together, have ended and others taken their slots, so
    # the singles meet it as it runs, not only in the seconds before its first slot frees.
    async def turning_over() -> bool:
        done = await store.generations.count_documents({"batch_id": batch["id"], "status": "completed"})
        return done >= LIMIT

    await eventually(turning_over, 60, "the batch's first round of tasks ended")
    waiting = await store.generations.count_documents({"batch_id": batch["id"], "status": "queued"})
    with_batch = await _singles(stack, "with batch")
    waiting_after = await store.generations.count_documents({"batch_id": batch["id"], "status": "queued"})

    report = {}
    for name, since, until in (
        ("create→submit", "created_at", "submit_started_at"),
        ("create→completed", "created_at", "completed"),
    ):
        a, b = _seconds(alone, since, until), _seconds(with_batch, since, until)
        report[name] = (statistics.median(a), _p90(a), statistics.median(b), _p90(b))
    log.info(
        "batch of %d accepted in %.1f s; %d of its items queued when the singles began, %d after; %s",
        BATCH,
        accepted_s,
        waiting,
        waiting_after,
        "; ".join(
            f"{name}: alone median {m:.2f} s p90 {p:.2f} s, with the batch median {bm:.2f} s p90 {bp:.2f} s"
            for name, (m, p, bm, bp) in report.items()
        ),
    )
    # The batch was there all along: the provider stayed full, most of the batch still waits.
    assert stack.runway.peak_running <= LIMIT
    ran = await store.generations.count_documents(
        {"batch_id": batch["id"], "provider_task_id": {"$ne": None}}
    )
    assert ran < BATCH // 2, "the batch did not keep the provider busy throughout"

    median_alone, p90_alone, median_with, p90_with = report["create→completed"]
    assert median_with <= BOUND * median_alone, report
    assert p90_with <= TAIL_BOUND * p90_alone, report
