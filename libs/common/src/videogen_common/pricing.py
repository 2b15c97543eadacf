"""What each provider charges, in US dollars per second of video, by model (and resolution where the provider
prices by it): one table (``DEFAULT_PRICES``, from the providers' published prices; docs/providers.md says
where each figure comes from and when it was read), overridden per deployment by ``VIDEOGEN_PRICES`` (JSON).

The api estimates a generation's cost with it when it is created (its first candidate, the seconds that
provider will make of it); the orchestrator prices each attempt when it ends (the model, resolution and
seconds it asked the provider for); ``GET /v1/providers`` shows it. What an attempt cost depends on whether
the provider charged for it (``charged``): every provider charges a video it made; for a failed task, only
where that provider says it does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from videogen_common.capabilities import CAPABILITIES, nearest_duration
from videogen_common.domain import Provider
from videogen_common.failures import ErrorCode, GenerationError

# model -> resolution ("*": any) -> USD per second of video
ModelPrices = dict[str, dict[str, float]]
ANY_RESOLUTION = "*"

# The model each provider's adapter asks for unless the deployment chose another (its *_MODEL setting).
DEFAULT_MODELS: dict[Provider, str] = {
    Provider.MOCK: "mock",
    Provider.RUNWAY: "gen4.5",
    Provider.LUMA: "ray-2",
    Provider.PIKA: "fal-ai/pika/v2.2/text-to-video",
}

# Published list prices (docs/providers.md, "Prices"): Runway in credits of $0.01 per second; Luma per
# million pixels, here per second of a 16:9 video at 24 fps at each resolution; Pika on fal per 5-second
# video at each resolution.
DEFAULT_PRICES: dict[Provider, ModelPrices] = {
    Provider.MOCK: {"mock": {ANY_RESOLUTION: 0.0}},
    Provider.RUNWAY: {
        "gen4.5": {ANY_RESOLUTION: 0.12},
        "gen4_turbo": {ANY_RESOLUTION: 0.05},
        "veo3.1": {ANY_RESOLUTION: 0.40},
        "veo3.1_fast": {ANY_RESOLUTION: 0.15},
    },
    Provider.LUMA: {
        "ray-2": {"540p": 0.08, "720p": 0.142, "1080p": 0.318, "4k": 1.274},
        "ray-flash-2": {"540p": 0.0274, "720p": 0.0487, "1080p": 0.1095, "4k": 0.438},
    },
    Provider.PIKA: {
        "fal-ai/pika/v2.2/text-to-video": {"720p": 0.04, "1080p": 0.09},
        "fal-ai/pika/v2.2/image-to-video": {"720p": 0.04, "1080p": 0.09},
    },
}

# Costs are kept to a hundredth of a cent.
DIGITS = 4


class PriceError(ValueError):
    """``VIDEOGEN_PRICES`` is not what it must be."""


def parse_overrides(raw: str) -> dict[Provider, ModelPrices]:
    """``VIDEOGEN_PRICES``: ``{"<provider>": {"<model>": <USD per second> | {"<resolution>": <USD per second>,
    ...}}}``; each model given replaces that model's prices. Empty: none."""
    if not raw.strip():
        return {}
    try:
        given = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise PriceError(f"not JSON: {exc}") from None
    if not isinstance(given, dict):
        raise PriceError("must be a JSON object of providers")
    overrides: dict[Provider, ModelPrices] = {}
    for name, models in given.items():
        try:
            provider = Provider(name)
        except ValueError:
            raise PriceError(f"unknown provider {name!r}") from None
        if not isinstance(models, dict) or not models:
            raise PriceError(f"{name}: must map models to prices")
        overrides[provider] = {model: _per_resolution(name, model, price) for model, price in models.items()}
    return overrides


def _per_resolution(provider: str, model: str, price: Any) -> dict[str, float]:
    prices = price if isinstance(price, dict) else {ANY_RESOLUTION: price}
    checked: dict[str, float] = {}
    for resolution, value in prices.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise PriceError(f"{provider} {model} {resolution}: a price is a number of dollars, at least 0")
        checked[str(resolution)] = float(value)
    if not checked:
        raise PriceError(f"{provider} {model}: no prices")
    return checked


def billed_seconds(provider: str, duration: int) -> int:
    """The seconds a provider makes (and charges) for a request of ``duration``: the nearest it makes."""
    return nearest_duration(duration, CAPABILITIES[Provider(provider)].durations)


@dataclass(frozen=True)
class PriceTable:
    """The defaults with the deployment's overrides."""

    prices: Mapping[Provider, ModelPrices]

    @classmethod
    def with_overrides(cls, raw: str = "") -> PriceTable:
        merged = {provider: dict(models) for provider, models in DEFAULT_PRICES.items()}
        for provider, models in parse_overrides(raw).items():
            merged.setdefault(provider, {}).update(models)
        return cls(merged)

    def per_second(self, provider: str, model: str | None, resolution: str | None) -> float | None:
        """USD per second of ``model`` (None: the provider's default) at ``resolution``; None when the table
        has no price for it."""
        models = self.prices.get(Provider(provider), {})
        by_resolution = models.get(model or DEFAULT_MODELS[Provider(provider)])
        if by_resolution is None:
            return None
        if resolution is not None and resolution in by_resolution:
            return by_resolution[resolution]
        return by_resolution.get(ANY_RESOLUTION)

    def estimate(
        self, provider: str, model: str | None, resolution: str | None, duration: int
    ) -> float | None:
        """What a request of ``duration`` seconds costs at the provider, if it is made."""
        rate = self.per_second(provider, model, resolution)
        return None if rate is None else round(rate * billed_seconds(provider, duration), DIGITS)

    def of_plan(self, provider: str, plan: Mapping[str, Any] | None, duration: int) -> float | None:
        """What the provider charges for the task a plan asked for (its model, resolution and seconds; the
        mock records no plan)."""
        plan = plan or {}
        rate = self.per_second(provider, plan.get("model"), plan.get("resolution"))
        if rate is None:
            return None
        seconds = plan.get("duration_s")
        if not isinstance(seconds, int):
            seconds = billed_seconds(provider, duration)
        return round(rate * seconds, DIGITS)

    def public(self, provider: str) -> list[dict[str, Any]]:
        """What ``GET /v1/providers`` shows: every model's price, per resolution (None: any)."""
        models = self.prices.get(Provider(provider), {})
        return [
            {
                "model": model,
                "resolution": None if resolution == ANY_RESOLUTION else resolution,
                "usd_per_second": price,
            }
            for model, by_resolution in models.items()
            for resolution, price in by_resolution.items()
        ]


def charged(provider: str, error: GenerationError | None) -> bool:
    """Whether a task the provider accepted is charged: a video it made always is (``error`` None); a failed
    one only where the provider says so. Runway refunds every failure but input moderation (``SAFETY.INPUT``);
    fal (Pika) never charges server errors but may charge a request it refused (invalid input, content
    policy) after running it; Luma refunds every failed generation; the mock is free."""
    if error is None:
        return True
    if error.code == ErrorCode.CANCELED:
        return False
    if provider == Provider.RUNWAY:
        return (error.provider_code or "").startswith(("SAFETY.INPUT", "INPUT_PREPROCESSING.SAFETY"))
    if provider == Provider.PIKA:
        return error.code in (ErrorCode.CONTENT_POLICY, ErrorCode.PROVIDER_REJECTED)
    return False
