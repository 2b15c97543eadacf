"""What each provider charges, in US dollars per second of video, by model (and resolution where the provider
prices by it): the prices of the catalogue's models (``videogen_common.catalogue``: the built-in table, from
the providers' published prices, as ``VIDEOGEN_MODELS`` changes it; docs/providers.md says where each figure
comes from and when it was read), overridden per deployment by ``VIDEOGEN_PRICES`` (JSON).

The api estimates a generation's cost with it when it is created (its first candidate, the seconds that
provider will make of it); the orchestrator prices each attempt when it ends (the model, resolution and
seconds it asked the provider for); ``GET /v1/providers`` shows it. What an attempt cost depends on whether
the provider charged for it (``charged``): every provider charges a video it made; for a failed task, only
where that provider says it does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from videogen_common.capabilities import CAPABILITIES, nearest_duration
from videogen_common.catalogue import ANY_RESOLUTION, BUILT_IN, Catalogue, PriceError, parse_overrides
from videogen_common.domain import Provider
from videogen_common.failures import ErrorCode, GenerationError

# model -> resolution ("*": any) -> USD per second of video
ModelPrices = dict[str, dict[str, float]]

# The model each provider's adapter asks for unless the deployment chose another (its *_MODEL setting), and
# every built-in model's published list prices: both read from the one table of models
# (``videogen_common.catalogue.BUILT_IN``; docs/providers.md, "Prices", says where each figure comes from).
DEFAULT_MODELS: dict[Provider, str] = {
    p: spec.id for p in Provider if (spec := Catalogue(BUILT_IN).default(p.value)) is not None
}
DEFAULT_PRICES: dict[Provider, ModelPrices] = Catalogue(BUILT_IN).price_table()

__all__ = [
    "DEFAULT_MODELS",
    "DEFAULT_PRICES",
    "DIGITS",
    "ModelPrices",
    "PriceError",
    "PriceTable",
    "billed_seconds",
    "charged",
    "parse_overrides",
]

# Costs are kept to a hundredth of a cent.
DIGITS = 4


def billed_seconds(provider: str, duration: int) -> int:
    """The seconds a provider makes (and charges) for a request of ``duration``: the nearest it makes."""
    return nearest_duration(duration, CAPABILITIES[Provider(provider)].durations)


@dataclass(frozen=True)
class PriceTable:
    """The defaults with the deployment's overrides."""

    prices: Mapping[Provider, ModelPrices]
    # The durations each catalogued model makes ((provider, model) -> seconds): what an estimate bills.
    durations: Mapping[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def with_overrides(cls, raw: str = "", catalogue: Catalogue | None = None) -> PriceTable:
        """The prices of ``catalogue``'s models (None: the built-in ones) with ``raw`` (``VIDEOGEN_PRICES``)
        over them; a model ``raw`` prices that the catalogue does not list is priced too (a deployment's
        *_MODEL may name one)."""
        catalogue = catalogue or Catalogue(BUILT_IN)
        merged = {provider: dict(models) for provider, models in catalogue.price_table().items()}
        for provider, models in parse_overrides(raw).items():
            merged.setdefault(provider, {}).update(models)
        durations = {(m.provider.value, m.id): m.capabilities.durations for m in catalogue.models}
        return cls(merged, durations)

    def seconds(self, provider: str, model: str | None, duration: int) -> int:
        """The seconds ``model`` (None: the provider's default) makes for a request of ``duration``."""
        offered = self.durations.get((provider, model or DEFAULT_MODELS[Provider(provider)]))
        return nearest_duration(duration, offered) if offered else billed_seconds(provider, duration)

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
        return None if rate is None else round(rate * self.seconds(provider, model, duration), DIGITS)

    def of_plan(self, provider: str, plan: Mapping[str, Any] | None, duration: int) -> float | None:
        """What the provider charges for the task a plan asked for (its model, resolution and seconds; the
        mock records no plan)."""
        plan = plan or {}
        rate = self.per_second(provider, plan.get("model"), plan.get("resolution"))
        if rate is None:
            return None
        seconds = plan.get("duration_s")
        if not isinstance(seconds, int):
            seconds = self.seconds(provider, plan.get("model"), duration)
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
