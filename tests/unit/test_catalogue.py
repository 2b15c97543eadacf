"""The catalogue of models (``videogen_common.catalogue``): the one table every other place reads (the price
table, the providers' capabilities, the orchestrator's default models) and the places that must agree with it
(the Runway adapter's duration tables, docs/providers.md); what a deployment changes with ``VIDEOGEN_MODELS``,
and a bad value refused at start-up naming the setting; what a model can make, by request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from videogen_common.capabilities import CAPABILITIES
from videogen_common.catalogue import BUILT_IN, Catalogue, CatalogueError, refusals
from videogen_common.domain import Provider
from videogen_common.pricing import DEFAULT_MODELS, DEFAULT_PRICES, PriceTable
from videogen_common.settings import CommonSettings, SettingsError, load_settings
from videogen_orchestrator.providers.runway import IMAGE_MODELS, TEXT_MODELS
from videogen_orchestrator.settings import OrchestratorSettings

ROOT = Path(__file__).parents[2]
CATALOGUE = Catalogue()


def test_each_providers_default_model_makes_what_its_capabilities_say() -> None:
    """A request naming no model is checked against ``CAPABILITIES`` (as before models) and made by the
    default model: the two are one."""
    for provider in Provider:
        default = CATALOGUE.default(provider.value)
        assert default is not None and default.default, provider
        assert default.capabilities == CAPABILITIES[provider], provider
        assert [m.id for m in CATALOGUE.of(provider.value) if m.default] == [default.id]


def test_the_price_table_and_the_default_models_are_read_from_the_catalogue() -> None:
    assert {
        provider: {m.id: dict(m.prices) for m in BUILT_IN if m.provider is provider} for provider in Provider
    } == DEFAULT_PRICES
    for provider in Provider:
        default = CATALOGUE.default(provider.value)
        assert default is not None
        assert DEFAULT_MODELS[provider] == default.id
        assert OrchestratorSettings().model_of(provider)[0] == default.id


def test_runways_models_and_durations_are_the_adapters() -> None:
    """A Runway model added to the catalogue but not to the adapter's tables (or the other way round) fails
    here: the adapter asks Runway for the durations of its tables."""
    runway = {m.id: m for m in CATALOGUE.of("runway")}
    assert set(IMAGE_MODELS) == {m for m, spec in runway.items() if spec.capabilities.image}
    assert set(TEXT_MODELS) == {m for m, spec in runway.items() if spec.capabilities.text}
    for model, spec in runway.items():
        table = TEXT_MODELS.get(model) or IMAGE_MODELS[model]
        assert spec.capabilities.durations == table, model


def test_every_model_is_listed_in_the_providers_doc() -> None:
    section = (ROOT / "docs/providers.md").read_text().split("## Models", 1)[1].split("\n## ", 1)[0]
    for spec in BUILT_IN:
        row = [
            line
            for line in section.splitlines()
            if line.startswith(f"| `{spec.provider.value}` | `{spec.id}`")
        ]
        assert len(row) == 1, (spec.provider, spec.id)
        durations = ", ".join(map(str, spec.capabilities.durations))
        assert durations in row[0], (spec.id, durations)


def _configured(models: Any, prices: Any = None) -> Catalogue:
    return Catalogue.configured(
        orjson.dumps(models).decode(), orjson.dumps(prices).decode() if prices else ""
    )


def test_a_deployment_adds_removes_reprices_and_changes_models() -> None:
    catalogue = _configured(
        {
            "luma": {
                "ray-3": {
                    "durations": [10, 5],
                    "aspect_ratios": ["16:9"],
                    "resolutions": ["1080p"],
                    "prices": 0.3,
                    "default": True,
                },
                "ray-flash-2": None,
            },
            "runway": {"veo3.1": {"prices": {"720p": 0.5}, "seed": False}},
        },
        prices={"runway": {"gen4.5": 0.2}},
    )
    luma = catalogue.of("luma")
    assert [(m.id, m.default) for m in luma] == [("ray-2", False), ("ray-3", True)]
    ray3 = luma[1]
    assert (ray3.capabilities.durations, ray3.capabilities.default_resolution) == ((5, 10), "1080p")
    assert ray3.capabilities.text and not ray3.capabilities.image  # the defaults of a new model
    veo = catalogue.get("runway", "veo3.1")
    assert veo is not None and veo.prices == {"720p": 0.5} and not veo.capabilities.seed
    assert veo.capabilities.durations == (4, 6, 8)  # the rest as listed
    gen45 = catalogue.get("runway", "gen4.5")
    assert gen45 is not None and gen45.prices == {"*": 0.2}  # VIDEOGEN_PRICES over the catalogue
    table = PriceTable.with_overrides("", catalogue)
    assert table.estimate("luma", "ray-3", "1080p", 7) == 3.0  # makes 10 s at $0.30
    assert table.estimate("runway", "veo3.1", "720p", 5) == 3.0  # 6 s at $0.50


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("{", "not JSON"),
        ('{"kling": {}}', "unknown provider 'kling'"),
        ('{"luma": {"ray-9": {"durations": [5]}}}', "a new model needs aspect_ratios, resolutions, prices"),
        ('{"luma": {"ray-2": {"fps": 24}}}', "unknown field(s) fps"),
        ('{"luma": {"ray-2": {"durations": []}}}', "durations is a non-empty list"),
        ('{"luma": {"ray-2": {"resolutions": ["8k"]}}}', "resolutions is a non-empty list of"),
        ('{"luma": {"ray-2": {"prices": {"720p": -1}}}}', "a price is a number of dollars"),
        ('{"luma": {"ray-2": {"seed": "yes"}}}', "seed is true or false"),
        ('{"luma": {"ray-7": null}}', "cannot remove a model not listed"),
        ('{"mock": {"mock": null}}', "mock: every model removed"),
        (
            '{"luma": {"ray-2": {"text_to_video": false, "image_to_video": false}}}',
            "a model takes text, a first frame, or both",
        ),
        (
            '{"luma": {"ray-2": {"default": true}, "ray-flash-2": {"default": true}}}',
            "one default model, not ray-2, ray-flash-2",
        ),
    ],
)
def test_a_bad_models_setting_stops_start_up_naming_it(raw: str, says: str) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(CommonSettings, models=raw)
    message = str(refused.value)
    assert "VIDEOGEN_MODELS" in message and says in message


def test_an_unknown_model_named_by_an_orchestrator_default_is_not_catalogued_but_priced_by_override() -> None:
    """A deployment's *_MODEL may name a model the catalogue does not list: ``VIDEOGEN_PRICES`` prices it."""
    settings = load_settings(CommonSettings, prices='{"pika": {"fal-ai/pika/v2/turbo/text-to-video": 0.05}}')
    assert settings.catalogue.get("pika", "fal-ai/pika/v2/turbo/text-to-video") is None
    assert settings.price_table.per_second("pika", "fal-ai/pika/v2/turbo/text-to-video", "720p") == 0.05
    with pytest.raises(CatalogueError):
        Catalogue.configured('{"pika": []}')


@pytest.mark.parametrize(
    ("model", "options", "duration", "named", "fields"),
    [
        ("veo3.1", {}, 10, True, ["duration"]),  # a named model is held to its durations
        ("veo3.1", {}, 8, True, []),
        ("gen4.5", {}, 10, False, []),
        ("gen4_turbo", {}, 5, True, ["image"]),  # only from a first frame
        ("gen4_turbo", {"image": {"url": "https://x.test/a.png"}}, 10, True, []),
        ("gen4.5", {"negative_prompt": "fog"}, 5, True, ["negative_prompt"]),
        ("veo3.1_fast", {"negative_prompt": "fog", "seed": 3}, 5, True, []),
        ("ray-flash-2", {"aspect_ratio": "21:9", "resolution": "4k"}, 9, True, []),
        ("ray-flash-2", {"seed": 1, "resolution": "360p"}, 5, True, ["resolution", "seed"]),
    ],
)
def test_what_a_model_can_make(
    model: str, options: dict[str, Any], duration: int, named: bool, fields: list[str]
) -> None:
    spec = next(m for m in BUILT_IN if m.id == model)
    errors = refusals(spec, options, duration, named=named)
    assert sorted(e["field"] for e in errors) == fields
    code = "unsupported_by_model" if named else "unsupported_by_provider"
    assert all(e["code"] == code and (not named or f"model {model} makes" in e["message"]) for e in errors)


def test_the_catalogue_filters_by_what_a_model_can_do() -> None:
    ids = [m.id for m in CATALOGUE.filtered(provider="runway", image_to_video=True, duration=10)]
    assert ids == ["gen4.5", "gen4_turbo"]
    assert [m.id for m in CATALOGUE.filtered(resolution="4k")] == ["ray-2", "ray-flash-2"]
    assert CATALOGUE.serving("ray-2") == [Provider.LUMA]
