"""The providers' HTTP client over real sockets: which failures it retries, how long it waits (the sleeps are
recorded, not slept), and what it refuses to repeat."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import pytest

from tests.support.fake_providers.common import FakeProviderAPI
from tests.support.fake_providers.fal import FakeFal
from tests.support.fake_providers.luma import FakeLuma
from tests.support.fake_providers.runway import FakeRunway
from tests.support.receivers import HANG, Reply, always, receiving, replies
from videogen_common.failures import ErrorCode
from videogen_common.routing import TaskMade, is_provider_failure
from videogen_orchestrator.providers.base import Job, ProviderError
from videogen_orchestrator.providers.http import (
    AmbiguousRequest,
    DownloadRefused,
    DownloadTooLarge,
    ProviderHTTP,
    RetryPolicy,
    TransientFailure,
    download,
)
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.pika import PikaAdapter
from videogen_orchestrator.providers.runway import RunwayAdapter

POLICY = RetryPolicy(attempts=4, base_delay=0.001, max_delay=0.004, retry_after_max=30.0, jitter=0.2)


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
async def fake() -> AsyncIterator[FakeRunway]:
    async with FakeRunway(task_seconds=0) as fake:
        yield fake


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def client(fake: FakeRunway, sleeps: Sleeps) -> AsyncIterator[ProviderHTTP]:
    http = ProviderHTTP(
        name="runway",
        base_url=fake.base_url,
        headers=RunwayAdapter.headers(fake.api_key),
        policy=POLICY,
        timeout_seconds=5,
        sleep=sleeps,
        rand=lambda: 0.5,
    )
    yield http
    await http.close()


def a_task(fake: FakeRunway) -> str:
    return fake.new_task({"model": "gen4.5", "promptText": "x", "ratio": "1280:720", "duration": 5}).id


async def test_retry_after_is_honoured(fake: FakeRunway, client: ProviderHTTP, sleeps: Sleeps) -> None:
    task_id = a_task(fake)
    fake.throttle_next(2, retry_after="7", kind="poll")

    reply = await client.request("GET", f"/v1/tasks/{task_id}")

    assert reply.status == 200 and reply.body["status"] == "SUCCEEDED"
    assert sleeps == [7.0, 7.0]


async def test_a_long_retry_after_is_clamped(fake: FakeRunway, client: ProviderHTTP, sleeps: Sleeps) -> None:
    task_id = a_task(fake)
    fake.throttle_next(1, retry_after="86400", kind="poll")

    await client.request("GET", f"/v1/tasks/{task_id}")

    assert sleeps == [30.0]


async def test_5xx_backs_off_exponentially_then_gives_up(
    fake: FakeRunway, client: ProviderHTTP, sleeps: Sleeps
) -> None:
    task_id = a_task(fake)
    fake.fail_next(10, status=503, kind="poll")

    with pytest.raises(TransientFailure, match="HTTP 503") as failed:
        await client.request("GET", f"/v1/tasks/{task_id}")

    assert failed.value.status == 503
    assert fake.count("GET") == POLICY.attempts
    assert sleeps == pytest.approx([0.001, 0.002, 0.004])


async def test_a_final_error_is_answered_not_retried(
    fake: FakeRunway, client: ProviderHTTP, sleeps: Sleeps
) -> None:
    reply = await client.request("GET", "/v1/tasks/no-such-task")

    assert reply.status == 404
    assert reply.body == {"error": "Task not found."}
    assert sleeps == []


async def test_a_submit_is_repeated_on_a_status_the_provider_calls_safe_only(
    fake: FakeRunway, client: ProviderHTTP
) -> None:
    body = {"model": "gen4.5", "promptText": "x", "ratio": "1280:720", "duration": 5}
    fake.fail_next(1, status=503, kind="submit")
    reply = await client.request(
        "POST", "/v1/text_to_video", json=body, idempotent=False, safe_statuses=(429, 503)
    )
    assert reply.status == 200

    fake.fail_next(1, status=500, kind="submit")
    with pytest.raises(AmbiguousRequest, match="HTTP 500"):
        await client.request(
            "POST", "/v1/text_to_video", json=body, idempotent=False, safe_statuses=(429, 503)
        )
    assert fake.count("POST") == 3
    assert len(fake.submissions) == 1


async def test_a_refused_connection_is_retried_even_for_a_submit(sleeps: Sleeps) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    http = ProviderHTTP(
        name="t",
        base_url=f"http://127.0.0.1:{port}",
        headers={},
        policy=POLICY,
        timeout_seconds=5,
        sleep=sleeps,
    )
    try:
        with pytest.raises(TransientFailure):
            await http.request("POST", "/v1/text_to_video", json={}, idempotent=False)
    finally:
        await http.close()
    assert len(sleeps) == POLICY.attempts - 1  # nothing was sent: every try was safe


async def test_a_timeout_is_retried_for_a_read_but_ambiguous_for_a_submit(sleeps: Sleeps) -> None:
    async with receiving(always(HANG)) as receiver:
        http = ProviderHTTP(
            name="t", base_url=receiver.url(""), headers={}, policy=POLICY, timeout_seconds=0.2, sleep=sleeps
        )
        try:
            with pytest.raises(TransientFailure, match="Timeout"):
                await http.request("GET", "/status")
            assert receiver.count("/status") == POLICY.attempts

            with pytest.raises(AmbiguousRequest):
                await http.request("POST", "/submit", json={"a": 1}, idempotent=False)
            assert receiver.count("/submit") == 1
        finally:
            receiver.release()
            await http.close()


async def test_a_download_is_bounded_and_refusals_are_final(fake: FakeRunway, sleeps: Sleeps) -> None:
    task = fake.new_task({"promptText": "x"})
    url = fake.video_url(task)

    assert (
        await download(url, max_bytes=len(fake.video), timeout_seconds=5, policy=POLICY, sleep=sleeps)
        == fake.video
    )
    with pytest.raises(DownloadTooLarge):
        await download(url, max_bytes=len(fake.video) - 1, timeout_seconds=5, policy=POLICY, sleep=sleeps)
    with pytest.raises(DownloadRefused, match="404"):
        await download(
            url.replace(task.id, "gone"), max_bytes=10**9, timeout_seconds=5, policy=POLICY, sleep=sleeps
        )
    assert sleeps == []


async def test_a_download_retries_transient_failures(sleeps: Sleeps) -> None:
    ok = Reply(200)
    async with receiving(replies(Reply(503, {"Retry-After": "2"}), Reply(502), then=ok)) as receiver:
        data = await download(
            receiver.url("/video.mp4"),
            max_bytes=10,
            timeout_seconds=5,
            policy=POLICY,
            sleep=sleeps,
            rand=lambda: 0.5,
        )

    assert data == b""
    assert receiver.count() == 3
    assert sleeps == pytest.approx([2.0, 0.002])


@pytest.mark.parametrize("provider", ["runway", "luma", "pika"])
@pytest.mark.parametrize("outage", ["down", "5xx", "timeout"])
async def test_a_submit_failing_through_the_providers_fault_is_one_its_breaker_counts(
    provider: str, outage: str
) -> None:
    """The adapters' part of "health from every failure": a provider unreachable, timing out, or answering
    5xx at submit raises a ``ProviderError`` whose error the breaker counts (``is_provider_failure``), which
    the actor reports to the key's health like a failed task."""
    fakes: dict[str, type[FakeProviderAPI]] = {"runway": FakeRunway, "luma": FakeLuma, "pika": FakeFal}
    adapters: dict[str, type[RunwayAdapter | LumaAdapter | PikaAdapter]] = {
        "runway": RunwayAdapter,
        "luma": LumaAdapter,
        "pika": PikaAdapter,
    }
    async with fakes[provider](task_seconds=0) as fake:
        http = ProviderHTTP(
            name=provider,
            base_url=fake.base_url,
            headers=adapters[provider].headers(fake.api_key),
            policy=POLICY,
            timeout_seconds=0.3,
            sleep=Sleeps(),
        )
        adapter = adapters[provider](http)
        if outage == "down":
            await fake.go_down()
        elif outage == "5xx" and isinstance(fake, FakeFal):
            fake.proxy_fail_next(POLICY.attempts, status=503)
        elif outage == "5xx":
            fake.fail_next(POLICY.attempts, status=503, kind="submit")
        else:
            fake.submit_seconds = 1.0
        try:
            with pytest.raises(ProviderError) as raised:
                await adapter.submit(Job("gen_1", "a fox", 5))
        finally:
            await adapter.close()
            if outage == "down":
                await fake.come_back()

    assert raised.value.error.code == ErrorCode.PROVIDER_UNAVAILABLE
    assert is_provider_failure(raised.value.error)
    # Unreachable or refused by load shedding: no task was made (routing may move on); a timeout: unknown.
    assert raised.value.task is (TaskMade.UNKNOWN if outage == "timeout" else TaskMade.NONE)
