"""The Pika adapter (fal's queue API) and the fal fake held to fal's official Python client, ``fal-client``
(the version ``SDK_VERSION`` names; requirements/dev.in pins it). fal-client types no model's input (each
model's schema is its own), so what it fixes is the queue's shape: where a submit goes for a model id
(``workflows/`` and ``comfy/`` namespaces included), where a request's status, result and cancel are, the
credentials header, which failed submit may be sent again, and the status answers it reads. The adapter is
held to each, the fake's answers are ones fal-client parses, and fal-client's own client, pointed at the fake,
submits, reads the status, fetches the result and cancels."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import fal_client
import httpx
import pytest
from fal_client.client import AppId, Completed, InProgress, Queued, _BaseRequestHandle, _should_retry_response

from tests.contract.sdk import answer_json, contract_headers, json_of, off_loop
from tests.support.fake_providers.common import Exchange
from tests.support.fake_providers.fal import MODEL_ID, PROXY_PAGE, RUNNER_ERROR, FakeFal
from tests.support.images import solid_image
from videogen_orchestrator.providers.base import Job, TaskStatus
from videogen_orchestrator.providers.http import ProviderHTTP, RetryPolicy
from videogen_orchestrator.providers.pika import PikaAdapter, app_id, never_accepted

SDK_VERSION = "1.0.3"
MODEL_IDS = [MODEL_ID, "workflows/acme/pika-flow/text-to-video", "comfy/acme/pika-graph"]


@pytest.fixture(params=MODEL_IDS)
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[FakeFal]:
    async with FakeFal(model_id=request.param, task_seconds=0.05) as fake:
        yield fake


@pytest.fixture
def sdk(fake: FakeFal, monkeypatch: pytest.MonkeyPatch) -> Iterator[fal_client.SyncClient]:
    """fal-client's own client, its queue host swapped for the fake's (it builds every queue URL from it)."""
    monkeypatch.setattr(fal_client.client, "QUEUE_URL_FORMAT", fake.origin + "/")
    client = fal_client.SyncClient(key=fake.api_key)
    yield client
    client._client.close()


@pytest.fixture
async def adapter_for(fake: FakeFal) -> AsyncIterator[Callable[..., PikaAdapter]]:
    made: list[PikaAdapter] = []

    def make(**options: Any) -> PikaAdapter:
        http = ProviderHTTP(
            name="pika",
            base_url=fake.base_url,
            headers=PikaAdapter.headers(fake.api_key),
            policy=RetryPolicy(attempts=1),
            timeout_seconds=10,
        )
        made.append(PikaAdapter(http, model=fake.model_id, **options))
        return made[-1]

    yield make
    for adapter in made:
        await adapter.close()


def since(fake: FakeFal, start: int) -> list[Exchange]:
    return fake.exchanges[start:]


def same_call(ours: Exchange, sdks: Exchange, ids: tuple[str, str]) -> None:
    assert (ours.method, ours.path.replace(*ids)) == (sdks.method, sdks.path)
    assert contract_headers(ours) == contract_headers(sdks)


def test_the_contract_is_held_to_the_sdk_version_it_names() -> None:
    assert fal_client.__version__ == SDK_VERSION


@pytest.mark.parametrize(
    "model_id",
    [
        "fal-ai/pika/v2.2/text-to-video",
        "fal-ai/pika",
        "fal-ai/kling-video/v2.1/master/image-to-video",
        "workflows/acme/pika-flow",
        "workflows/acme/pika-flow/text-to-video",
        "comfy/acme/pika-graph",
        "comfy/acme/pika-graph/run/now",
    ],
)
def test_a_model_ids_app_is_read_as_fal_client_reads_it(model_id: str) -> None:
    app = AppId.from_endpoint_id(model_id)
    expected = "/".join(part for part in (app.namespace, app.owner, app.alias) if part)
    assert app_id(model_id) == expected


@pytest.mark.parametrize("model_id", ["fal-ai", "workflows/acme", "comfy/acme/"])
def test_a_model_id_without_an_owner_and_a_name_is_refused(model_id: str) -> None:
    with pytest.raises(ValueError, match="fal model id"):
        app_id(model_id)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
@pytest.mark.parametrize("request_id", [None, "req_1"])
@pytest.mark.parametrize("timeout_type", [None, "user"])
@pytest.mark.parametrize(
    "body", [PROXY_PAGE.format(status="502 Bad Gateway"), '{"detail": "Internal error"}']
)
def test_a_failed_submit_is_sent_again_exactly_when_fal_client_would_send_it_again(
    status: int, request_id: str | None, timeout_type: str | None, body: str
) -> None:
    headers = {"x-fal-request-id": request_id} if request_id else {}
    if timeout_type:
        headers["X-Fal-Request-Timeout-Type"] = timeout_type
    response = httpx.Response(status, headers=headers, text=body)
    ours = never_accepted(status, httpx.Headers(headers), body.encode())
    assert ours == _should_retry_response(response)
    # And only what fal's front proxy answered is ever resent.
    proxy = status in (502, 503, 504) and not request_id and "nginx" in body
    assert ours == (proxy and not (status == 504 and timeout_type))


async def test_a_submit_and_each_read_of_the_request_are_fal_clients_requests(
    fake: FakeFal, sdk: fal_client.SyncClient, adapter_for: Callable[..., PikaAdapter]
) -> None:
    adapter = adapter_for()
    job = Job("gen_1", "a fox", 5, "9:16", "1080p", seed=4, negative_prompt="rain")
    fake.task_seconds = 0.0

    start = len(fake.exchanges)
    ours_id = await adapter.submit(job)
    [submit] = since(fake, start)
    start = len(fake.exchanges)
    handle = await off_loop(lambda: sdk.submit(fake.model_id, arguments=json_of(submit)))
    [sdk_submit] = since(fake, start)
    same_call(submit, sdk_submit, ("", ""))
    assert json_of(submit) == json_of(sdk_submit)

    start = len(fake.exchanges)
    state = await adapter.poll(ours_id, job)  # the status, then (completed) the result
    status, result = since(fake, start)
    assert state.status is TaskStatus.SUCCEEDED
    start = len(fake.exchanges)
    read = await off_loop(lambda: sdk.status(fake.model_id, handle.request_id, with_logs=True))
    assert isinstance(read, Completed)
    got = await off_loop(lambda: sdk.result(fake.model_id, handle.request_id))
    sdk_status, sdk_status_again, sdk_result = since(fake, start)  # its result() reads the status first
    ids = (ours_id, handle.request_id)
    same_call(status, sdk_status, ids)
    same_call(result, sdk_result, ids)
    assert sdk_status_again.path == sdk_status.path
    # Both ask for the logs (fal-client spells it ``true``, we ``1``: the same to fal).
    assert status.query["logs"] == "1" and sdk_status.query["logs"] == "true"
    assert got["video"]["url"] == fake.video_url(fake.tasks[handle.request_id])

    fake.task_seconds = 60.0
    ours_running = await adapter.submit(job)
    sdks_running = (await off_loop(lambda: sdk.submit(fake.model_id, arguments={"prompt": "x"}))).request_id
    start = len(fake.exchanges)
    await adapter.cancel(ours_running)
    await off_loop(lambda: sdk.cancel(fake.model_id, sdks_running))
    cancel, sdk_cancel = since(fake, start)
    same_call(cancel, sdk_cancel, (ours_running, sdks_running))
    assert fake.canceled == [ours_running, sdks_running]


async def test_a_submit_from_an_image_goes_where_fal_client_sends_the_image_model_id(
    fake: FakeFal, sdk: fal_client.SyncClient, adapter_for: Callable[..., PikaAdapter]
) -> None:
    job = Job("gen_1", "a fox", 5, image=solid_image((1, 2, 3)), image_type="image/png")
    start = len(fake.exchanges)
    await adapter_for().submit(job)
    [submit] = since(fake, start)
    start = len(fake.exchanges)
    await off_loop(lambda: sdk.submit(fake.image_model_id, arguments=json_of(submit)))
    [sdk_submit] = since(fake, start)
    same_call(submit, sdk_submit, ("", ""))
    assert json_of(submit)["image_url"].startswith("data:image/png;base64,")


async def test_fal_clients_client_submits_reads_and_cancels_against_the_fake(
    fake: FakeFal, sdk: fal_client.SyncClient
) -> None:
    fake.queue_seconds = 60.0
    handle = await off_loop(lambda: sdk.submit(fake.model_id, arguments={"prompt": "a fox", "duration": 5}))
    queued = await off_loop(lambda: sdk.status(fake.model_id, handle.request_id))
    assert isinstance(queued, Queued) and queued.position == 0
    fake.tasks[handle.request_id].queue_seconds = 0
    fake.tasks[handle.request_id].run_seconds = 60.0
    running = await off_loop(lambda: sdk.status(fake.model_id, handle.request_id, with_logs=True))
    assert isinstance(running, InProgress) and running.logs
    await off_loop(lambda: sdk.cancel(fake.model_id, handle.request_id))
    assert fake.canceled == [handle.request_id]


async def test_every_status_the_fake_answers_is_one_fal_client_parses(fake: FakeFal) -> None:
    body = {"prompt": "a fox"}
    views: dict[str, dict[str, Any]] = {}
    for phase, (queue, run, failure) in {
        "queued": (60.0, 60.0, None),
        "running": (0.0, 60.0, None),
        "succeeded": (0.0, 0.0, None),
        "failed": (0.0, 0.0, RUNNER_ERROR),
    }.items():
        task = fake.new_task(body)
        task.queue_seconds, task.run_seconds, task.failure = queue, run, failure
        views[phase] = fake.view(task)
    fake.error_in_status = True
    views["failed_with_error"] = fake.view(task)

    handle = _BaseRequestHandle("r", "u", "u", "u")
    assert isinstance(handle._parse_status(views["queued"]), Queued)
    assert isinstance(handle._parse_status(views["running"]), InProgress)
    assert isinstance(handle._parse_status(views["succeeded"]), Completed)
    completed = handle._parse_status(views["failed_with_error"])
    assert isinstance(completed, Completed)
    assert completed.error and completed.error_type == RUNNER_ERROR
    # A submit's answer carries what fal-client builds its request handle from.
    created = answer_json(fake.created(task))
    assert {"request_id", "response_url", "status_url", "cancel_url"} <= set(created)
    assert created["status_url"] == f"{fake.origin}/{fake.app_id}/requests/{task.id}/status"


async def test_a_submit_naming_a_webhook_is_fal_clients_request(
    fake: FakeFal, sdk: fal_client.SyncClient, adapter_for: Callable[..., PikaAdapter]
) -> None:
    url = "https://videogen.test/v1/provider-callbacks/pika/gen_1.0.mac?x=1&y=2"
    start = len(fake.exchanges)
    await adapter_for().submit(Job("gen_1", "a fox", 5, callback_url=url))
    [submit] = since(fake, start)
    start = len(fake.exchanges)
    await off_loop(lambda: sdk.submit(fake.model_id, arguments=json_of(submit), webhook_url=url))
    [sdk_submit] = since(fake, start)
    same_call(submit, sdk_submit, ("", ""))
    assert submit.query == sdk_submit.query == {"fal_webhook": url}
    assert json_of(submit) == json_of(sdk_submit)
