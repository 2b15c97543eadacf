"""Each adapter's mapping of the provider's answers onto ours: what it asks for (durations), and its
failures onto the stable error taxonomy."""

from __future__ import annotations

from typing import Any

import pytest

from videogen_orchestrator.providers.base import Job
from videogen_orchestrator.providers.http import ProviderHTTP, Reply, RetryPolicy
from videogen_orchestrator.providers.luma import LumaAdapter
from videogen_orchestrator.providers.luma import failure as luma_failure
from videogen_orchestrator.providers.pika import PikaAdapter, app_id, progress_from_logs
from videogen_orchestrator.providers.pika import failure as fal_failure
from videogen_orchestrator.providers.remote import message_of
from videogen_orchestrator.providers.runway import RunwayAdapter
from videogen_orchestrator.providers.runway import failure as runway_failure


def http() -> ProviderHTTP:
    return ProviderHTTP(
        name="t", base_url="http://127.0.0.1:9", headers={}, policy=RetryPolicy(), timeout_seconds=1
    )


def job(duration: int) -> Job:
    return Job("gen_1", "a fox", duration)


@pytest.mark.parametrize("duration", range(3, 11))
def test_every_requested_duration_maps_onto_one_each_provider_makes(duration: int) -> None:
    runway = RunwayAdapter(http()).plan(job(duration))
    luma = LumaAdapter(http()).plan(job(duration))
    pika = PikaAdapter(http()).plan(job(duration))

    assert runway["duration_s"] == duration  # gen4.5 makes every length from 2 to 10 s
    assert luma["duration_s"] == (5 if duration <= 5 else 9)
    assert pika["duration_s"] == (5 if duration <= 5 else 10)
    for plan in (runway, luma, pika):
        assert plan["requested_duration_s"] == duration


def test_an_unknown_runway_model_is_refused_at_start_up() -> None:
    with pytest.raises(ValueError, match="gen9"):
        RunwayAdapter(http(), model="gen9")


@pytest.mark.parametrize(
    ("code", "ours", "retriable"),
    [
        ("SAFETY.INPUT.TEXT", "content_policy", False),
        ("SAFETY.INPUT.IMAGE", "content_policy", False),
        ("SAFETY.OUTPUT.VIDEO", "content_policy", False),
        ("INPUT_PREPROCESSING.SAFETY.TEXT", "content_policy", False),
        ("INPUT_PREPROCESSING.INTERNAL", "provider_error", True),
        ("INTERNAL.BAD_OUTPUT.CODE01", "provider_error", True),
        ("INTERNAL", "provider_error", True),
        ("ASSET.INVALID", "provider_rejected", False),
        ("SOMETHING.NEW", "provider_error", False),
        (None, "provider_error", True),
    ],
)
def test_runway_failure_codes(code: str | None, ours: str, retriable: bool) -> None:
    error = runway_failure(code, "reason")
    assert (error.code, error.provider_code, error.retriable) == (ours, code, retriable)
    assert error.message == "reason"


@pytest.mark.parametrize(
    ("reason", "ours"),
    [
        ("400: prompt not allowed because advanced moderation failed", "content_policy"),
        ("The output was flagged as NSFW", "content_policy"),
        ("The generation failed due to an internal error", "provider_error"),
        (None, "provider_error"),
    ],
)
def test_luma_failure_reasons(reason: str | None, ours: str) -> None:
    assert luma_failure(reason).code == ours


@pytest.mark.parametrize(
    ("body", "status", "ours", "provider_code", "retriable"),
    [
        (
            {"detail": [{"loc": ["body", "prompt"], "msg": "flagged", "type": "content_policy_violation"}]},
            422,
            "content_policy",
            "content_policy_violation",
            False,
        ),
        (
            {"detail": [{"loc": ["body"], "msg": "bad", "type": "value_error"}]},
            422,
            "provider_rejected",
            "value_error",
            False,
        ),
        (
            {"detail": "Request timed out", "error_type": "request_timeout"},
            504,
            "provider_timeout",
            "request_timeout",
            True,
        ),
        (
            {"detail": "Startup", "error_type": "startup_timeout"},
            504,
            "provider_timeout",
            "startup_timeout",
            True,
        ),
        (
            {"detail": "boom", "error_type": "runner_server_error"},
            500,
            "provider_error",
            "runner_server_error",
            True,
        ),
        ({"detail": "gone", "error_type": "client_cancelled"}, 499, "canceled", "client_cancelled", False),
        ({"detail": "boom"}, 500, "provider_error", "http_500", True),
    ],
)
def test_fal_errors(body: Any, status: int, ours: str, provider_code: str, retriable: bool) -> None:
    error = fal_failure(body, status)
    assert (error.code, error.provider_code, error.retriable) == (ours, provider_code, retriable)


def test_fal_status_and_result_urls_drop_the_endpoint_sub_path() -> None:
    assert app_id("fal-ai/pika/v2.2/text-to-video") == "fal-ai/pika"
    assert app_id("/fal-ai/pika/") == "fal-ai/pika"
    with pytest.raises(ValueError, match="owner/name"):
        app_id("pika")


@pytest.mark.parametrize(
    ("status", "body", "ours", "retriable"),
    [
        (400, {"error": "Invalid ratio"}, "provider_rejected", False),
        (400, {"detail": "prompt not allowed because advanced moderation failed"}, "content_policy", False),
        (401, {"error": "Invalid API key."}, "provider_unavailable", False),
        (402, {"detail": "insufficient credits"}, "provider_unavailable", False),
        (404, {"error": "Task not found."}, "provider_error", False),
        (500, "oops", "provider_error", True),
    ],
)
def test_a_refused_request(status: int, body: Any, ours: str, retriable: bool) -> None:
    error = RunwayAdapter(http()).refusal(Reply(status, body, {}))
    assert (error.code, error.provider_code, error.retriable) == (ours, f"http_{status}", retriable)


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"error": "Invalid ratio"}, "Invalid ratio"),
        ({"detail": "Invalid API key provided"}, "Invalid API key provided"),
        ({"detail": [{"msg": "a"}, {"msg": "b"}]}, "a; b"),
        ("plain text", "plain text"),
        (None, "no reason given"),
        ({}, "no reason given"),
    ],
)
def test_the_reason_in_an_error_body(body: Any, text: str) -> None:
    assert message_of(body) == text


@pytest.mark.parametrize(
    ("messages", "progress"),
    [
        (["Generating video:  45%|████▌     | 9/20 [00:04<00:05]"], 45),
        (["step 9/20"], 45),
        (["Loading the model", "Generating video: 100%|██████████| 20/20"], 99),  # 100 is the finished video
        (
            ["  10%|█ | 2/20", "Generating video:  60%|██████    | 12/20", "Saving the video"],
            60,
        ),  # newest that says
        (["Loading the model"], None),
        (["resized to 1280/720", "v2.2"], None),  # a ratio that is not a count (done > total)
        ([], None),
    ],
)
def test_fals_progress_is_estimated_from_the_newest_log_line_with_a_progress_bar(
    messages: list[str], progress: int | None
) -> None:
    logs = [{"message": m, "level": "INFO", "timestamp": "2026-11-25T06:00:00Z"} for m in messages]
    assert progress_from_logs(logs) == progress


@pytest.mark.parametrize("logs", [None, "45%|", [None, 3, {"message": 7}]])
def test_fals_progress_is_unknown_without_usable_logs(logs: object) -> None:
    assert progress_from_logs(logs) is None


@pytest.mark.parametrize(
    ("error_type", "ours"),
    [
        ("content_policy_violation", "content_policy"),
        ("request_timeout", "provider_timeout"),
        ("runner_server_error", "provider_error"),
    ],
)
def test_a_completed_fal_status_carrying_an_error_maps_its_error_type(error_type: str, ours: str) -> None:
    error = fal_failure({"status": "COMPLETED", "error": "it failed", "error_type": error_type})
    assert (error.code, error.message, error.provider_code) == (ours, "it failed", error_type)


def test_a_first_frame_is_planned_with_runways_image_model_and_its_durations() -> None:
    adapter = RunwayAdapter(http(), model="veo3.1", image_model="gen4_turbo")
    from_text = adapter.plan(job(7))
    from_image = adapter.plan(Job("gen_1", "a fox", 7, image=b"png", image_type="image/png"))

    assert (from_text["model"], from_text["duration_s"]) == ("veo3.1", 8)
    assert (from_image["model"], from_image["duration_s"], from_image["from_image"]) == (
        "gen4_turbo",
        10,
        True,
    )
