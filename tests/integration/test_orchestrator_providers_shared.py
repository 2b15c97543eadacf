"""What every real adapter does the same way, each against its provider's fake on 127.0.0.1 (Runway, Luma,
Pika through fal): a queued task shows as queued; a submit whose answer was lost is never sent again; past
the deadline, and on a client's cancel, the task is canceled at the provider."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.fake_providers.common import FakeProviderAPI
from tests.support.fake_providers.fal import FakeFal
from tests.support.fake_providers.luma import FakeLuma
from tests.support.fake_providers.runway import FakeRunway
from tests.support.orchestration import ProviderRun, provider_run
from videogen_common.domain import Status
from videogen_common.failures import CANCELED_BY_CLIENT
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

FAKES: dict[str, type[FakeProviderAPI]] = {"runway": FakeRunway, "luma": FakeLuma, "pika": FakeFal}


@pytest.fixture(params=list(FAKES))
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[FakeProviderAPI]:
    async with FAKES[request.param](task_seconds=0.05) as fake:
        yield fake


@pytest.fixture
async def run(
    store: Store, base_env: dict[str, str], tmp_path: Path, fake: FakeProviderAPI
) -> AsyncIterator[ProviderRun]:
    async with provider_run(store, base_env, tmp_path / "media", fake) as run:
        yield run


async def test_a_queued_task_shows_as_queued_then_completes(run: ProviderRun, fake: FakeProviderAPI) -> None:
    doc = await run.run_through_the_queue()

    assert doc["status"] == "completed", doc["error"]
    assert len(fake.submissions) == 1


async def test_a_submit_whose_answer_was_lost_is_not_sent_again(
    run: ProviderRun, fake: FakeProviderAPI
) -> None:
    fake.lose_next_submit_responses = 1
    doc = await run.run()

    assert (doc["status"], doc["error"]["code"]) == ("failed", "provider_unavailable")
    assert doc["error"]["retriable"] is True
    assert "never paid for twice" in doc["error"]["message"]
    assert fake.count("POST") == 1  # the task may exist: one submission, never two
    assert len(fake.submissions) == 1


async def test_past_its_deadline_a_generation_times_out_and_its_task_is_canceled(
    run: ProviderRun, fake: FakeProviderAPI
) -> None:
    fake.task_seconds = math.inf  # the provider never finishes it
    gid = await run.start()
    await run.until_submitted(gid)
    run.clock.advance(timedelta(seconds=run.settings.generation_deadline_seconds))
    await run.runner.wait_idle()

    doc = await run.get(gid)
    assert (doc["status"], doc["error"]["code"]) == ("failed", "provider_timeout")
    assert doc["error"]["retriable"] is True
    assert fake.canceled == [doc["provider_task_id"]]
    assert fake.requests.count(fake.cancel_request(doc["provider_task_id"])) == 1


async def test_a_client_cancel_cancels_the_task_at_the_provider(
    run: ProviderRun, fake: FakeProviderAPI
) -> None:
    fake.task_seconds = math.inf
    gid = await run.start()
    await run.until_submitted(gid)
    # What POST /v1/generations/{id}/cancel does.
    canceled = await GenerationRepository(run.store).transition(
        await run.get(gid),
        Status.FAILED,
        now=run.clock.now(),
        fields={"error": CANCELED_BY_CLIENT.to_doc()},
    )
    assert canceled is not None
    await run.runner.wait_idle()

    doc = await run.get(gid)
    assert doc["error"]["code"] == "canceled"
    assert fake.canceled == [doc["provider_task_id"]]
    assert fake.requests.count(fake.cancel_request(doc["provider_task_id"])) == 1
    assert doc.get("video_key") is None
    assert fake.downloads == 0
