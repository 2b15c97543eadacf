"""The models each provider serves, declared once: per (provider, model) what it makes (durations, aspect
ratios, resolutions), what it takes (a prompt, a first frame, a seed, a negative prompt), its price per second
of video (by resolution) and whether it is the provider's default. The built-in table (``BUILT_IN``) holds
the providers' current models as their official SDKs list them (docs/providers.md, "Models"); a deployment
adds, removes or reprices models with ``VIDEOGEN_MODELS`` (``parse_models``), and reprices with
``VIDEOGEN_PRICES`` (``videogen_common.pricing``), both read at start-up: a bad value stops it.

Each provider's default model is the one its ``capabilities.CAPABILITIES`` entry describes (a test holds
them together), so a request that names no model is checked and made as before models could be named.

The api validates a request against the model it names (``refusals``), serves the table as ``GET
/v1/models`` and within ``GET /v1/providers``, and estimates a generation's cost by it; the orchestrator's
adapters send the model a generation recorded, and price each attempt by the model it asked for."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from videogen_common.capabilities import (
    ASPECT_RATIOS,
    CAPABILITIES,
    RESOLUTIONS,
    Capabilities,
    unsupported,
)
from videogen_common.domain import Provider

# USD per second of video, by resolution ("*": any).
ANY_RESOLUTION = "*"
Prices = Mapping[str, float]


class CatalogueError(ValueError):
    """``VIDEOGEN_MODELS`` is not what it must be."""


@dataclass(frozen=True)
class ModelSpec:
    """One model of one provider."""

    provider: Provider
    id: str
    capabilities: Capabilities
    prices: Prices
    default: bool = False
    # What docs/providers.md and the listings say of it.
    description: str = ""

    def price(self, resolution: str | None) -> float | None:
        """USD per second at ``resolution`` (None: its default), or None when it has no price for it."""
        resolution = resolution or self.capabilities.default_resolution
        if resolution in self.prices:
            return self.prices[resolution]
        return self.prices.get(ANY_RESOLUTION)

    def makes(self, duration: int) -> bool:
        """Whether it makes a video at least ``duration`` seconds long (a request is never cut shorter)."""
        return max(self.capabilities.durations) >= duration

    def public(self, enabled: bool) -> dict[str, Any]:
        """What ``GET /v1/models`` shows of it."""
        caps = self.capabilities
        return {
            "provider": self.provider.value,
            "id": self.id,
            "default": self.default,
            "enabled": enabled,
            "description": self.description,
            "durations": list(caps.durations),
            "aspect_ratios": list(caps.aspect_ratios),
            "resolutions": list(caps.resolutions),
            "default_resolution": caps.default_resolution,
            "text_to_video": caps.text,
            "image_to_video": caps.image,
            "seed": caps.seed,
            "negative_prompt": caps.negative_prompt,
            "prices": [
                {
                    "resolution": None if resolution == ANY_RESOLUTION else resolution,
                    "usd_per_second": price,
                }
                for resolution, price in self.prices.items()
            ],
        }

    def limits(self) -> str:
        """What it can make, in a sentence (the 422 for a request it cannot make names it)."""
        caps = self.capabilities
        inputs = [
            name
            for name, able in (
                ("text", caps.text),
                ("a first frame", caps.image),
                ("a seed", caps.seed),
                ("a negative prompt", caps.negative_prompt),
            )
            if able
        ]
        return (
            f"{self.provider.value} model {self.id} makes {', '.join(map(str, caps.durations))} s, "
            f"{', '.join(caps.aspect_ratios)}, at {', '.join(caps.resolutions)}; it takes "
            f"{', '.join(inputs) or 'nothing'}"
        )


def _model(
    provider: Provider, model: str, prices: Prices, default: bool = False, **changes: Any
) -> ModelSpec:
    """A model that makes what its provider's default model makes (``CAPABILITIES``) but for ``changes``."""
    caps = replace(CAPABILITIES[provider], **changes) if changes else CAPABILITIES[provider]
    return ModelSpec(provider, model, caps, dict(prices), default)


# Published list prices (docs/providers.md, "Prices"): Runway in credits of $0.01 per second; Luma per million
# pixels, here per second of a 16:9 video at 24 fps at each resolution; Pika on fal per 5-second video at each
# resolution. Runway's models and their durations: the runwayml SDK's ``text_to_video_create_params`` and
# ``image_to_video_create_params`` (one TypedDict per model; the 1280:720 and 720:1280 ratios, which every
# one of them takes, and Veo's 1920:1080 and 1080:1920 at 1080p); Luma's: the lumaai SDK's
# ``generations.video_create_params``; Pika 2.2 on fal: its endpoints' documented inputs.
VEO, HD = (4, 6, 8), ("720p", "1080p")
BUILT_IN: tuple[ModelSpec, ...] = (
    _model(Provider.MOCK, "mock", {ANY_RESOLUTION: 0.0}, default=True),
    _model(Provider.RUNWAY, "gen4.5", {ANY_RESOLUTION: 0.12}, default=True),
    # Veo makes 1080p too (Runway's 1920:1080 and 1080:1920), at the same credits a second.
    _model(
        Provider.RUNWAY, "veo3.1", {ANY_RESOLUTION: 0.40}, durations=VEO, resolutions=HD, negative_prompt=True
    ),
    _model(
        Provider.RUNWAY,
        "veo3.1_fast",
        {ANY_RESOLUTION: 0.15},
        durations=VEO,
        resolutions=HD,
        negative_prompt=True,
    ),
    # Gen-4 Turbo starts only from an image.
    _model(Provider.RUNWAY, "gen4_turbo", {ANY_RESOLUTION: 0.05}, durations=(5, 10), text=False),
    _model(
        Provider.LUMA,
        "ray-2",
        {"540p": 0.08, "720p": 0.142, "1080p": 0.318, "4k": 1.274},
        default=True,
    ),
    _model(Provider.LUMA, "ray-flash-2", {"540p": 0.0274, "720p": 0.0487, "1080p": 0.1095, "4k": 0.438}),
    # From text; with a first frame the adapter asks its sibling …/image-to-video endpoint (same app, price).
    _model(Provider.PIKA, "fal-ai/pika/v2.2/text-to-video", {"720p": 0.04, "1080p": 0.09}, default=True),
    _model(Provider.PIKA, "fal-ai/pika/v2.2/image-to-video", {"720p": 0.04, "1080p": 0.09}, text=False),
)

# The fields a ``VIDEOGEN_MODELS`` entry may give (a new model must give the first four).
_FIELDS = (
    "durations",
    "aspect_ratios",
    "resolutions",
    "prices",
    "default_resolution",
    "text_to_video",
    "image_to_video",
    "seed",
    "negative_prompt",
    "default",
    "description",
)
_REQUIRED_NEW = _FIELDS[:4]


@dataclass(frozen=True)
class Catalogue:
    """Every model of every provider, in order (each provider's models together)."""

    models: tuple[ModelSpec, ...] = BUILT_IN
    _index: dict[tuple[str, str], ModelSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {(m.provider.value, m.id): m for m in self.models})

    @classmethod
    def configured(cls, models: str = "", prices: str = "") -> Catalogue:
        """The built-in table with ``VIDEOGEN_MODELS`` (``models``) and then ``VIDEOGEN_PRICES`` (``prices``)
        applied; raises ``CatalogueError`` (or ``pricing.PriceError``) naming what is wrong."""
        table = apply(BUILT_IN, parse_models(models))
        repriced = []
        overrides = parse_overrides(prices)
        for spec in table:
            given = overrides.get(spec.provider, {}).get(spec.id)
            repriced.append(replace(spec, prices=dict(given)) if given is not None else spec)
        return cls(tuple(repriced))

    def get(self, provider: str, model: str) -> ModelSpec | None:
        return self._index.get((provider, model))

    def of(self, provider: str) -> list[ModelSpec]:
        return [m for m in self.models if m.provider.value == provider]

    def default(self, provider: str) -> ModelSpec | None:
        """The provider's default model: the one marked so, else its first."""
        models = self.of(provider)
        return next((m for m in models if m.default), models[0] if models else None)

    def serving(self, model: str) -> list[Provider]:
        """The providers that list a model of this id."""
        return [m.provider for m in self.models if m.id == model]

    def filtered(
        self,
        *,
        provider: str | None = None,
        image_to_video: bool | None = None,
        text_to_video: bool | None = None,
        duration: int | None = None,
        aspect_ratio: str | None = None,
        resolution: str | None = None,
        seed: bool | None = None,
        negative_prompt: bool | None = None,
    ) -> list[ModelSpec]:
        """The models that match every filter given (a capability's filter: whether it has it)."""

        def keep(m: ModelSpec) -> bool:
            caps = m.capabilities
            flags = (
                (image_to_video, caps.image),
                (text_to_video, caps.text),
                (seed, caps.seed),
                (negative_prompt, caps.negative_prompt),
            )
            return (
                (provider is None or m.provider.value == provider)
                and all(wanted is None or wanted == has for wanted, has in flags)
                and (duration is None or m.makes(duration))
                and (aspect_ratio is None or aspect_ratio in caps.aspect_ratios)
                and (resolution is None or resolution in caps.resolutions)
            )

        return [m for m in self.models if keep(m)]

    def price_table(self) -> dict[Provider, dict[str, dict[str, float]]]:
        """Every model's prices: ``pricing.PriceTable``'s table."""
        table: dict[Provider, dict[str, dict[str, float]]] = {}
        for m in self.models:
            table.setdefault(m.provider, {})[m.id] = dict(m.prices)
        return table


class PriceError(ValueError):
    """``VIDEOGEN_PRICES`` is not what it must be."""


def parse_overrides(raw: str) -> dict[Provider, dict[str, dict[str, float]]]:
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
    overrides: dict[Provider, dict[str, dict[str, float]]] = {}
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


def refusals(
    spec: ModelSpec, options: Mapping[str, Any], duration: int, *, named: bool
) -> list[dict[str, str]]:
    """Field errors for what a request (its ``VIDEO_OPTIONS`` and image given, and its duration) asks of
    ``spec`` and it cannot make ([]: it can make it). The provider's default model, when no model is named,
    is refused as the provider always was (``unsupported_by_provider``: what the provider accepts) and makes
    the nearest duration it can; a named model is refused with ``unsupported_by_model`` and its limits, and
    is held to its durations (a request longer than its longest is refused, never cut short)."""
    caps = spec.capabilities
    errors = unsupported(spec.provider, dict(options), caps)
    if not caps.text and options.get("image") is None:
        errors.append(
            {
                "field": "image",
                "message": f"{spec.id} makes videos only from a first frame",
                "code": "unsupported_by_provider",
            }
        )
    if named and not spec.makes(duration):
        message = f"{spec.id} makes {', '.join(map(str, caps.durations))} s; not {duration}"
        errors.append({"field": "duration", "message": message, "code": "unsupported_by_provider"})
    if not named:
        return errors
    limits = spec.limits()
    return [
        {"field": e["field"], "message": f"{e['message']} ({limits})", "code": "unsupported_by_model"}
        for e in errors
    ]


def parse_models(raw: str) -> dict[Provider, dict[str, dict[str, Any] | None]]:
    """``VIDEOGEN_MODELS``: ``{"<provider>": {"<model>": null | {<field>: <value>, ...}}}``: ``null`` removes
    a model; an object adds a model (``durations``, ``aspect_ratios``, ``resolutions`` and ``prices``
    required) or changes the fields it gives of one listed. Fields: ``durations`` (seconds),
    ``aspect_ratios``, ``resolutions``, ``prices`` (USD per second, or ``{"<resolution>": USD}``),
    ``default_resolution``, ``text_to_video``, ``image_to_video``, ``seed``, ``negative_prompt``,
    ``default`` (true: the provider's default model), ``description``. Empty: none."""
    if not raw.strip():
        return {}
    try:
        given = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise CatalogueError(f"not JSON: {exc}") from None
    if not isinstance(given, dict):
        raise CatalogueError("must be a JSON object of providers")
    parsed: dict[Provider, dict[str, dict[str, Any] | None]] = {}
    for name, models in given.items():
        try:
            provider = Provider(name)
        except ValueError:
            raise CatalogueError(f"unknown provider {name!r}") from None
        if not isinstance(models, dict) or not models:
            raise CatalogueError(f"{name}: must map model ids to an object or null")
        for model, entry in models.items():
            if not isinstance(model, str) or not model.strip():
                raise CatalogueError(f"{name}: a model id is a non-empty string")
            if entry is not None:
                _check_entry(name, model, entry)
        parsed[provider] = models
    return parsed


def _check_entry(provider: str, model: str, entry: Any) -> None:
    where = f"{provider} {model}"
    if not isinstance(entry, dict):
        raise CatalogueError(f"{where}: an object of fields, or null to remove the model")
    unknown = sorted(set(entry) - set(_FIELDS))
    if unknown:
        raise CatalogueError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(_FIELDS)}")
    durations = entry.get("durations")
    if durations is not None and (
        not isinstance(durations, list)
        or not durations
        or not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 60 for d in durations)
    ):
        raise CatalogueError(f"{where}: durations is a non-empty list of whole seconds, 1 to 60")
    for name, known in (("aspect_ratios", ASPECT_RATIOS), ("resolutions", RESOLUTIONS)):
        values = entry.get(name)
        if values is not None and (
            not isinstance(values, list) or not values or not all(v in known for v in values)
        ):
            raise CatalogueError(f"{where}: {name} is a non-empty list of {', '.join(known)}")
    for name in ("text_to_video", "image_to_video", "seed", "negative_prompt", "default"):
        if name in entry and not isinstance(entry[name], bool):
            raise CatalogueError(f"{where}: {name} is true or false")
    if "description" in entry and not isinstance(entry["description"], str):
        raise CatalogueError(f"{where}: description is a string")
    if "prices" in entry:
        _prices(where, entry["prices"])


def _prices(where: str, price: Any) -> dict[str, float]:
    prices = price if isinstance(price, dict) else {ANY_RESOLUTION: price}
    checked: dict[str, float] = {}
    for resolution, value in prices.items():
        if resolution != ANY_RESOLUTION and resolution not in RESOLUTIONS:
            raise CatalogueError(f"{where}: prices: unknown resolution {resolution!r}")
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise CatalogueError(f"{where}: prices: a price is a number of dollars, at least 0")
        checked[str(resolution)] = float(value)
    if not checked:
        raise CatalogueError(f"{where}: prices: none given")
    return checked


def apply(base: Iterable[ModelSpec], changes: Mapping[Provider, Mapping[str, Any]]) -> tuple[ModelSpec, ...]:
    """``base`` with ``VIDEOGEN_MODELS``' changes: removed, changed and added models (added ones after their
    provider's listed ones); each provider keeps at least one model and exactly one default."""
    models = list(base)
    for provider, entries in changes.items():
        for model, entry in entries.items():
            at = next((i for i, m in enumerate(models) if m.provider is provider and m.id == model), None)
            if entry is None:
                if at is None:
                    raise CatalogueError(f"{provider.value} {model}: cannot remove a model not listed")
                del models[at]
                continue
            if at is None:
                missing = [name for name in _REQUIRED_NEW if name not in entry]
                if missing:
                    raise CatalogueError(f"{provider.value} {model}: a new model needs {', '.join(missing)}")
                spec = _changed(_blank(provider, model), entry)
                last = max(
                    (i for i, m in enumerate(models) if m.provider is provider), default=len(models) - 1
                )
                models.insert(last + 1, spec)
            else:
                models[at] = _changed(models[at], entry)
        if entries:
            named = [m for m, e in entries.items() if isinstance(e, dict) and e.get("default") is True]
            if len(named) > 1:
                raise CatalogueError(f"{provider.value}: one default model, not {', '.join(named)}")
            if named:  # the one named default: every other of the provider's is not
                models = [
                    replace(m, default=False) if m.provider is provider and m.id != named[0] else m
                    for m in models
                ]
    for provider in Provider:
        if not any(m.provider is provider for m in models):
            raise CatalogueError(f"{provider.value}: every model removed; keep at least one")
    return tuple(models)


def _blank(provider: Provider, model: str) -> ModelSpec:
    caps = Capabilities(
        durations=(5,),
        aspect_ratios=("16:9",),
        resolutions=("720p",),
        default_resolution="720p",
        image=False,
        seed=False,
        negative_prompt=False,
        native_ratios=CAPABILITIES[provider].native_ratios,
    )
    return ModelSpec(provider, model, caps, {})


def _changed(spec: ModelSpec, entry: Mapping[str, Any]) -> ModelSpec:
    where = f"{spec.provider.value} {spec.id}"
    caps = spec.capabilities
    changes: dict[str, Any] = {}
    for name, attr in (
        ("durations", "durations"),
        ("aspect_ratios", "aspect_ratios"),
        ("resolutions", "resolutions"),
    ):
        if name in entry:
            changes[attr] = tuple(sorted(set(entry[name]))) if name == "durations" else tuple(entry[name])
    for name, attr in (
        ("text_to_video", "text"),
        ("image_to_video", "image"),
        ("seed", "seed"),
        ("negative_prompt", "negative_prompt"),
    ):
        if name in entry:
            changes[attr] = entry[name]
    resolutions = changes.get("resolutions", caps.resolutions)
    default_resolution = entry.get("default_resolution", caps.default_resolution)
    if default_resolution not in resolutions:
        default_resolution = resolutions[0] if "default_resolution" not in entry else default_resolution
    if default_resolution not in resolutions:
        raise CatalogueError(f"{where}: default_resolution must be one of its resolutions")
    changes["default_resolution"] = default_resolution
    caps = replace(caps, **changes)
    if not caps.text and not caps.image:
        raise CatalogueError(f"{where}: a model takes text, a first frame, or both")
    prices = _prices(where, entry["prices"]) if "prices" in entry else dict(spec.prices)
    return replace(
        spec,
        capabilities=caps,
        prices=prices,
        default=entry.get("default", spec.default),
        description=entry.get("description", spec.description),
    )
