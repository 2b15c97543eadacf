"""The price table: the published defaults, the deployment's overrides (and a bad one refused naming the
setting), a request's estimate from the seconds the provider makes of it, an attempt's cost from its plan,
who charges a failed task, and a finished generation's cost as the sum of its tries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from videogen_common import attempts
from videogen_common.domain import Status
from videogen_common.failures import ErrorCode, GenerationError
from videogen_common.pricing import DEFAULT_MODELS, DEFAULT_PRICES, PriceTable, charged
from videogen_common.records.generation import GenerationRecord
from videogen_common.settings import CommonSettings, SettingsError, load_settings

NOW = datetime(2026, 11, 21, 8, 47, tzinfo=UTC)
TABLE = PriceTable.with_overrides()


def test_every_providers_default_model_has_a_price() -> None:
    for provider, model in DEFAULT_MODELS.items():
        assert model in DEFAULT_PRICES[provider], provider


@pytest.mark.parametrize(
    ("provider", "resolution", "duration", "expected"),
    [
        ("runway", None, 5, 0.6),  # gen4.5: 12 credits of $0.01 a second
        ("runway", "720p", 3, 0.36),  # makes 3 s
        ("luma", "720p", 5, 0.71),  # Ray 2: $0.71 for 5 s at 720p
        ("luma", "540p", 3, 0.4),  # makes 5 s of a 3 s request
        ("luma", "1080p", 7, 2.862),  # makes 9 s
        ("pika", "720p", 5, 0.2),  # fal: $0.20 for 5 s at 720p
        ("pika", "1080p", 7, 0.9),  # makes 10 s at $0.09
        ("mock", None, 10, 0.0),
    ],
)
def test_an_estimate_is_the_price_of_the_seconds_the_provider_makes(
    provider: str, resolution: str | None, duration: int, expected: float
) -> None:
    assert TABLE.estimate(provider, None, resolution, duration) == expected


def test_overrides_replace_a_models_prices_and_add_models() -> None:
    table = PriceTable.with_overrides(
        '{"luma": {"ray-2": 0.1, "ray-3": {"720p": 0.5}}, "runway": {"gen4.5": 0.05}}'
    )
    assert table.per_second("luma", "ray-2", "4k") == 0.1
    assert table.per_second("luma", "ray-3", "720p") == 0.5
    assert table.per_second("luma", "ray-flash-2", "720p") == 0.0487  # untouched
    assert table.estimate("runway", None, None, 4) == 0.2
    assert table.per_second("luma", "ray-9", "720p") is None  # no price: unknown, not zero


@pytest.mark.parametrize(
    "raw",
    [
        '{"sora": {"x": 1}}',
        '{"luma": {"ray-2": -1}}',
        '{"luma": 3}',
        "[1]",
        "{not json",
        '{"luma": {"ray-2": true}}',
    ],
)
def test_a_bad_price_setting_is_refused_naming_it(raw: str) -> None:
    with pytest.raises(SettingsError, match="VIDEOGEN_PRICES"):
        load_settings(CommonSettings, prices=raw)


def test_an_attempts_cost_comes_from_what_its_plan_asked_for() -> None:
    plan = {"model": "ray-2", "resolution": "1080p", "duration_s": 9}
    assert TABLE.of_plan("luma", plan, 7) == 2.862
    assert TABLE.of_plan("mock", None, 5) == 0.0


@pytest.mark.parametrize(
    ("provider", "error", "expected"),
    [
        ("runway", None, True),
        ("runway", GenerationError(ErrorCode.PROVIDER_ERROR, "x", "INTERNAL", retriable=True), False),
        ("runway", GenerationError(ErrorCode.CONTENT_POLICY, "x", "SAFETY.INPUT.TEXT"), True),
        ("runway", GenerationError(ErrorCode.CONTENT_POLICY, "x", "SAFETY.OUTPUT.VIDEO"), False),
        ("luma", GenerationError(ErrorCode.CONTENT_POLICY, "x", "moderation"), False),
        ("luma", GenerationError(ErrorCode.PROVIDER_ERROR, "x", "failed", retriable=True), False),
        ("pika", GenerationError(ErrorCode.CONTENT_POLICY, "x", "content_policy_violation"), True),
        (
            "pika",
            GenerationError(ErrorCode.PROVIDER_ERROR, "x", "runner_server_error", retriable=True),
            False,
        ),
        ("pika", GenerationError(ErrorCode.CANCELED, "x", "client_cancelled"), False),
    ],
)
def test_which_failed_tasks_a_provider_charges(
    provider: str, error: GenerationError | None, expected: bool
) -> None:
    assert charged(provider, error) is expected


def _record(provider: str, **fields: object) -> GenerationRecord:
    return GenerationRecord(
        id="gen_1",
        account_id="acme",
        status=Status.PROCESSING,
        prompt="p",
        provider=provider,
        duration=5,
        created_at=NOW,
        updated_at=NOW,
        **fields,  # type: ignore[arg-type]
    )


def test_a_finished_generations_cost_is_the_sum_of_its_tries() -> None:
    earlier = {
        "provider": "runway",
        "pool": "runway",
        "started_at": NOW,
        "ended_at": NOW + timedelta(seconds=1),
        "error_code": "provider_unavailable",
        "cost": 0.0,
    }
    record = _record(
        "luma",
        provider_attempts=[earlier],
        submit_started_at=NOW + timedelta(seconds=2),
        provider_task_id="task-1",
        provider_request={"model": "ray-2", "resolution": "720p", "duration_s": 5},
    )
    fields, last = attempts.ending(record, None, TABLE, NOW + timedelta(seconds=30))
    assert fields == {"cost": 0.71}
    assert last is not None
    assert (last["provider"], last["error_code"], last["cost"]) == ("luma", None, 0.71)

    failed = GenerationError(ErrorCode.PROVIDER_ERROR, "internal", "failed", retriable=True)
    assert attempts.ending(record, failed, TABLE, NOW)[0] == {"cost": 0.0}  # Luma refunds failures
    never_submitted = _record("luma", provider_attempts=[earlier])
    assert attempts.ending(never_submitted, failed, TABLE, NOW) == ({"cost": 0.0}, None)
