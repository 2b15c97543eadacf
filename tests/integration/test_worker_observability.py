"""The worker services' side servers: probes that answer (and turn 503 when the store does not), and /metrics
after real traffic: generations and provider calls in the orchestrator, delivery attempts, outcomes and
backlogs in the notifier. Also the generation's ids on the orchestrator's log lines."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import faust
import orjson
import pytest
from pymongo.errors import PyMongoError

from tests.support.env import settings_for
from tests.support.fakes import RecordingSink
from tests.support.generations import due_generations, insert_generation
from tests.support.prometheus import sample
from tests.support.receivers import Receiver, failing, receiving
from tests.support.waiting import eventually
from tests.support.webhooks import insert_webhook
from videogen.engines import free_port
from videogen_common.domain import Provider
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.generations import new_generation, terminal_event
from videogen_common.ids import new_id
from videogen_common.logs import JsonFormatter
from videogen_common.media import LocalMediaStore
from videogen_common.metrics import new_registry
from videogen_common.probes import ProbeServer, probe_app
from videogen_common.records.generation import GenerationRecord
from videogen_common.store import Store
from videogen_common.topics import Topics
from videogen_notifier.deliveries import deliveries_for
from videogen_notifier.runtime import NotifierRuntime
from videogen_notifier.settings import NotifierSettings
from videogen_orchestrator.providers.base import (
    AdapterDefaults,
    Job,
    Output,
    ProviderError,
    TaskState,
    TaskStatus,
)
from videogen_orchestrator.runtime import OrchestratorRuntime
from videogen_orchestrator.settings import OrchestratorSettings

Doc = dict[str, Any]


async def get(port: int | None, path: str) -> tuple[int, str]:
    assert port is not None
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}{path}") as response:
        return response.status, await response.text()


async def readiness(port: int | None, until: Callable[[int, Doc], bool]) -> tuple[int, Doc]:
    """``/readyz`` asked again, as a kubelet does, until ``until(status, body)``: a check's first answer can
    take longer than its 2 s on a loaded machine (the broker's opens its connection then), and reads
    ``no answer`` meanwhile. The last answer."""
    answers: list[tuple[int, Doc]] = []

    async def answered() -> bool:
        status, body = await get(port, "/readyz")
        answers.append((status, orjson.loads(body)))
        return until(*answers[-1])

    await eventually(answered, 30, "the awaited /readyz answer")
    return answers[-1]


def closed_store_url() -> str:
    return f"mongodb://127.0.0.1:{free_port()}/?serverSelectionTimeoutMS=300&retryWrites=false"


# --- the orchestrator ------------------------------------------------------------------------------------


class ScriptedProvider(AdapterDefaults):
    """Finishes every task at once; refuses the prompt "refuse" at submit, as a real adapter reports it."""

    name = "mock"

    async def submit(self, job: Job) -> str:
        if job.prompt == "refuse":
            raise ProviderError(GenerationError(code=ErrorCode.PROVIDER_REJECTED, message="no"))
        return f"task_{job.generation_id}"

    async def poll(self, task_id: str, job: Job) -> TaskState:
        return TaskState(TaskStatus.SUCCEEDED, output=Output(video=b"mp4", thumbnail=b"\xff\xd8jpg"))


@pytest.fixture
def status_topic(base_env: dict[str, str], tmp_path: Path) -> faust.TopicT:
    """A faust topic for the runtime's constructor; the tests record its events instead of producing them."""
    app = faust.App("probe-tests", broker="kafka://127.0.0.1:1", datadir=str(tmp_path / "faust"))
    return app.topic(Topics(base_env["VIDEOGEN_TOPIC_PREFIX"]).status, value_serializer="raw")


@pytest.fixture
async def orchestrator(
    base_env: dict[str, str], store: Store, topics: Topics, status_topic: faust.TopicT
) -> AsyncIterator[OrchestratorRuntime]:
    settings = settings_for(OrchestratorSettings, base_env, poll_interval_seconds=0.01)
    runtime = OrchestratorRuntime(
        settings, status_topic, status_topic, providers={"mock": ScriptedProvider()}
    )
    runtime.sink = RecordingSink()  # type: ignore[assignment]  # what would have gone to Kafka
    await runtime.start()
    try:
        yield runtime
    finally:
        await runtime.stop()


async def test_orchestrator_probes_answer_on_the_side_port(orchestrator: OrchestratorRuntime) -> None:
    port = orchestrator.probes.port
    assert port is not None and port > 0  # VIDEOGEN_ORCHESTRATOR_PORT=0 in the tests: a free port
    assert await get(port, "/healthz") == (200, '{"status":"ok"}')
    _, body = await readiness(port, lambda status, _: status == 200)
    assert body == {"status": "ok", "checks": {"runtime": "ok", "store": "ok", "broker": "ok"}}


async def test_orchestrator_metrics_after_generations_finish(
    orchestrator: OrchestratorRuntime, store: Store
) -> None:
    clock = orchestrator.clock
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(JsonFormatter("orchestrator"))
    logger = logging.getLogger("videogen_orchestrator")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        done = (await insert_generation(store, clock.now(), prompt="a red fox", trace_id="req-done"))["_id"]
        refused = (await insert_generation(store, clock.now(), prompt="refuse", trace_id="req-refused"))[
            "_id"
        ]
        assert await orchestrator.runner.start(done)
        assert await orchestrator.runner.start(refused)
        await orchestrator.runner.wait_idle()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)

    status, text = await get(orchestrator.probes.port, "/metrics")
    assert status == 200
    finished = "videogen_generations_finished_total"
    assert 'videogen_generations_finished_total{outcome="completed",provider="mock"} 1.0' in text
    assert sample(text, finished, provider="mock", outcome="failed") == 1
    # Every provider and outcome is exported from zero, so rate() sees the first one (alerts depend on it).
    assert sample(text, finished, provider="luma", outcome="failed") == 0
    assert sample(text, "videogen_generation_failures_total", provider="mock", code="provider_rejected") == 1
    duration = "videogen_generation_duration_seconds_count"
    assert sample(text, duration, provider="mock", outcome="completed") == 1
    assert sample(text, "videogen_generation_state_seconds_count", provider="mock", state="processing") == 2
    calls = "videogen_provider_call_duration_seconds_count"
    assert sample(text, calls, provider="mock", call="submit", outcome="ok") == 1
    assert sample(text, calls, provider="mock", call="submit", outcome="error") == 1
    assert sample(text, calls, provider="mock", call="poll", outcome="ok") == 1
    errors = "videogen_provider_call_errors_total"
    assert sample(text, errors, provider="mock", call="submit", code="provider_rejected") == 1
    assert sample(text, "videogen_generations_in_flight") == 0

    # The generation's lines carry its ids, and the id of the request that created it.
    entries = [orjson.loads(line) for line in lines.getvalue().splitlines()]
    [finished_line] = [e for e in entries if e["msg"] == "generation finished" and e["generation_id"] == done]
    assert finished_line["request_id"] == "req-done" and finished_line["account_id"] == "acme"


async def test_orchestrator_store_wide_gauges(orchestrator: OrchestratorRuntime, store: Store) -> None:
    clock = orchestrator.clock
    for _ in range(2):
        await insert_generation(store, clock.now(), prompt="waiting", trace_id="req")
    await orchestrator.parts.admission.register()
    await orchestrator.metrics.refresh(store, clock.now())
    _, text = await get(orchestrator.probes.port, "/metrics")
    assert sample(text, "videogen_generations_unfinished", status="processing") == 2
    assert sample(text, "videogen_generations_unfinished", status="queued") == 0
    assert sample(text, "videogen_generations_outbox_pending") == 0
    # The mock's one pool, without a limit: nothing running, nothing waiting, no limit to report.
    assert sample(text, "videogen_provider_capacity_running", provider="mock", pool="mock") == 0
    assert sample(text, "videogen_provider_capacity_waiting", provider="mock") == 0
    assert "videogen_provider_capacity_limit{" not in text


async def test_a_running_orchestrator_sweeps_media_past_its_retention_on_its_own(
    base_env: dict[str, str], store: Store, topics: Topics, status_topic: faust.TopicT
) -> None:
    settings = settings_for(OrchestratorSettings, base_env, media_sweep_interval_seconds=0.2)
    media = LocalMediaStore(settings.media_dir)
    now = datetime.now(UTC)
    [due] = await due_generations(store, media, now, 1, now - timedelta(days=1))
    [kept] = await due_generations(store, media, now, 1, now + timedelta(days=1))
    runtime = OrchestratorRuntime(
        settings, status_topic, status_topic, providers={"mock": ScriptedProvider()}
    )
    runtime.sink = RecordingSink()  # type: ignore[assignment]  # what would have gone to Kafka
    await runtime.start()
    try:

        async def swept() -> bool:
            _, text = await get(runtime.probes.port, "/metrics")
            return sample(text, "videogen_media_swept_total", kind="generations") == 1

        await eventually(swept, 30, "a pass of the sweeper's own schedule, counted")
        assert await media.keys_in(due) == [] and len(await media.keys_in(kept)) == 2
        _, text = await get(runtime.probes.port, "/metrics")
        assert sample(text, "videogen_media_objects_deleted_total") == 2
    finally:
        await runtime.stop()


async def test_orchestrator_unready_while_the_store_does_not_answer(
    base_env: dict[str, str], topics: Topics, status_topic: faust.TopicT
) -> None:
    settings = settings_for(OrchestratorSettings, base_env, mongo_url=closed_store_url())
    runtime = OrchestratorRuntime(
        settings, status_topic, status_topic, providers={"mock": ScriptedProvider()}
    )
    await runtime.start()
    try:
        status, body = await get(runtime.probes.port, "/readyz")
        assert status == 503
        checks = orjson.loads(body)["checks"]
        assert checks["store"].startswith("error") and checks["runtime"] == "ok"
        assert (await get(runtime.probes.port, "/healthz"))[0] == 200
    finally:
        # Handing leases back needs the store, so this stop fails; the side server is closed all the same.
        with contextlib.suppress(PyMongoError):
            await runtime.stop()
    # Stopped: the side port is closed with it.
    with pytest.raises(aiohttp.ClientConnectionError):
        await get(runtime.probes.port, "/healthz")


# --- the notifier ----------------------------------------------------------------------------------------


@pytest.fixture
async def notifier(base_env: dict[str, str], store: Store, topics: Topics) -> AsyncIterator[NotifierRuntime]:
    settings = settings_for(NotifierSettings, base_env, webhook_retry_schedule="60", breaker_failures=1)
    runtime = NotifierRuntime(settings)
    await runtime.start()
    try:
        yield runtime
    finally:
        await runtime.stop()


async def deliver(notifier: NotifierRuntime, store: Store, receiver: Receiver, account: str) -> str:
    """A completed generation's event for ``account``'s one endpoint, at ``receiver``; returns the
    delivery id, once its attempt is over."""
    now = notifier.clock.now()
    await insert_webhook(store, receiver.url(), now=now, account_id=account, events=["video.completed"])
    doc = new_generation(
        generation_id=new_id("gen", now),
        account_id=account,
        prompt="a red fox",
        provider=Provider.MOCK,
        duration=3,
        now=now,
    )
    doc.update(status="completed", version=3)
    event = terminal_event(GenerationRecord.from_doc(doc), trace_id="req-notify")
    [(delivery_id, webhook_id)] = await deliveries_for(store, event, now)
    notifier.dispatcher.submit(delivery_id, webhook_id)
    await notifier.dispatcher.wait_idle()
    return delivery_id


async def test_notifier_probes_answer_on_the_side_port(notifier: NotifierRuntime) -> None:
    port = notifier.probes.port
    assert await get(port, "/healthz") == (200, '{"status":"ok"}')
    _, body = await readiness(port, lambda status, _: status == 200)
    assert body["checks"] == {"runtime": "ok", "store": "ok", "broker": "ok"}


async def test_notifier_metrics_after_deliveries(notifier: NotifierRuntime, store: Store) -> None:
    async with receiving() as healthy, receiving(failing(1, status=503)) as flaky:
        await deliver(notifier, store, healthy, "acme")
        await deliver(notifier, store, flaky, "globex")
    breaker = notifier.settings
    await notifier.metrics.refresh(
        store,
        notifier.clock.now(),
        breaker_failures=breaker.breaker_failures,
        breaker_cooldown=timedelta(seconds=breaker.breaker_cooldown_seconds),
    )
    status, text = await get(notifier.probes.port, "/metrics")
    assert status == 200
    assert 'videogen_delivery_attempts_total{outcome="2xx"} 1.0' in text
    assert sample(text, "videogen_delivery_attempts_total", outcome="5xx") == 1
    assert sample(text, "videogen_delivery_attempt_duration_seconds_count", outcome="2xx") == 1
    assert sample(text, "videogen_deliveries_finished_total", outcome="succeeded") == 1
    assert sample(text, "videogen_deliveries_finished_total", outcome="failed") == 0  # it will retry
    assert sample(text, "videogen_delivery_retry_backlog") == 1
    assert sample(text, "videogen_deliveries_overdue") == 0
    assert sample(text, "videogen_webhook_endpoints", state="failing") == 1
    assert sample(text, "videogen_webhook_endpoints", state="circuit_open") == 1  # one failure opens it here
    assert sample(text, "videogen_webhook_endpoints", state="disabled") == 0
    assert sample(text, "videogen_delivery_attempts_in_flight") == 0


async def test_notifier_unready_while_the_store_does_not_answer(
    base_env: dict[str, str], topics: Topics
) -> None:
    runtime = NotifierRuntime(settings_for(NotifierSettings, base_env, mongo_url=closed_store_url()))
    await runtime.start()
    try:
        status, body = await get(runtime.probes.port, "/readyz")
        assert status == 503
        assert orjson.loads(body)["checks"]["store"].startswith("error")
    finally:
        await runtime.stop()


async def test_notifier_unready_when_its_topic_is_missing(base_env: dict[str, str], store: Store) -> None:
    # No `topics` fixture: the migration has not created this test's topics.
    runtime = NotifierRuntime(settings_for(NotifierSettings, base_env))
    await runtime.start()
    try:
        # The broker answers (once its check has connected, perhaps not at the first ask), missing the topic.
        status, body = await readiness(
            runtime.probes.port, lambda _, body: "no answer" not in body["checks"]["broker"]
        )
        assert status == 503
        assert "run the migration" in body["checks"]["broker"]
    finally:
        await runtime.stop()


# --- the side server itself ------------------------------------------------------------------------------


async def test_a_taken_port_fails_the_start_instead_of_running_unseen() -> None:
    first = ProbeServer(probe_app(dict, new_registry()), "127.0.0.1", 0)
    await first.start()
    try:
        second = ProbeServer(probe_app(dict, new_registry()), "127.0.0.1", first.port or 0)
        with pytest.raises(OSError, match="address already in use"):
            await second.start()
    finally:
        await first.stop()
