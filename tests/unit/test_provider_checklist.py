"""The "new provider" checklist in docs/architecture.md, kept honest: every place that says which providers
exist reads the one list (``videogen_common.domain.Provider``) or is held to it here, and every file the
checklist names is where it says. A provider added to the list and missed anywhere fails one of these."""

from __future__ import annotations

import re
from pathlib import Path

from videogen_client import enums
from videogen_common.capabilities import CAPABILITIES
from videogen_common.domain import Provider
from videogen_common.pricing import DEFAULT_MODELS, DEFAULT_PRICES
from videogen_orchestrator.providers.registry import build_providers
from videogen_orchestrator.settings import CREDENTIALS, OrchestratorSettings

ROOT = Path(__file__).parents[2]
CHECKLIST = "**A new provider**"
# The one list, and the SDK's copy of it (the SDK may not import the server; a test holds it to the API).
HOMES = {
    ROOT / "libs/common/src/videogen_common/domain.py",
    ROOT / "clients/python/src/videogen_client/enums.py",
}
SOURCES = ("libs", "services", "clients", "src")
REAL = [p for p in Provider if p is not Provider.MOCK]


def checklist() -> str:
    text = (ROOT / "docs/architecture.md").read_text()
    return text.split(CHECKLIST, 1)[1].split("\n\n", 1)[0]


def test_each_per_provider_table_has_exactly_the_providers() -> None:
    assert set(CAPABILITIES) == set(Provider)
    assert set(CREDENTIALS) == set(REAL)  # each real one's key; the dev stack enables those it has keys for
    assert list(enums.Provider.__args__) == [p.value for p in Provider]  # type: ignore[attr-defined]


def test_each_provider_has_a_default_model_with_prices_and_the_orchestrator_asks_for_it() -> None:
    """Its entries in the price table (pricing.py): the model asked for when a deployment names none, and
    what that model costs; without them a generation at it could not be estimated or priced."""
    assert set(DEFAULT_MODELS) == set(Provider)
    assert set(DEFAULT_PRICES) == set(Provider)
    for provider in Provider:
        assert DEFAULT_MODELS[provider] in DEFAULT_PRICES[provider], provider
        # The model the orchestrator's settings ask for by default is the one the table prices by default.
        assert OrchestratorSettings().model_of(provider)[0] == DEFAULT_MODELS[provider], provider


def test_each_priced_model_is_in_the_price_table_of_the_providers_doc() -> None:
    """docs/providers.md's "Prices": each model of DEFAULT_PRICES on its provider's rows (by its whole name,
    or after "…/" by its last part), the default one marked so."""
    section = (ROOT / "docs/providers.md").read_text().split("## Prices", 1)[1].split("\n## ", 1)[0]
    for provider, models in DEFAULT_PRICES.items():
        rows = "\n".join(line for line in section.splitlines() if line.startswith(f"| `{provider.value}` |"))
        for model in models:
            assert f"`{model}`" in rows or f"`…/{model.rsplit('/', 1)[-1]}`" in rows, (provider, model)
        assert f"`{DEFAULT_MODELS[provider]}` (default)" in rows, provider


def test_with_every_credential_each_provider_gets_its_adapter_under_its_name() -> None:
    keys = dict.fromkeys(CREDENTIALS.values(), "key")
    settings = OrchestratorSettings(providers=",".join(p.value for p in Provider), **keys)  # type: ignore[arg-type]
    adapters = build_providers(settings)
    assert list(adapters) == [p.value for p in Provider]
    assert all(adapter.name == name for name, adapter in adapters.items())


def test_no_other_source_file_lists_the_providers() -> None:
    """A line naming three or more providers as strings is a copy of the list: read ``Provider`` instead."""
    names = "|".join(p.value for p in Provider)
    copy = re.compile(rf"""(["'`](?:{names})["'`].*){{3,}}""")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in SOURCES
        for path in (ROOT / folder).rglob("*")
        if path.suffix in (".py", ".js") and path not in HOMES
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if copy.search(line)
    ]
    assert found == []


def test_each_provider_is_documented_and_has_a_test_against_a_fake_of_its_api() -> None:
    providers_doc = (ROOT / "docs/providers.md").read_text()
    for provider in Provider:
        assert re.search(rf"^\| `{provider.value}` \|", providers_doc, re.M), provider
    for provider in REAL:
        assert (ROOT / f"tests/integration/test_orchestrator_providers_{provider.value}.py").exists()


def test_the_api_reference_names_every_provider_a_request_may_ask_for() -> None:
    text = (ROOT / "docs/api.md").read_text()
    listed = re.search(r"`provider` one of ([^;]*);", text)
    assert listed is not None
    assert re.findall(r"`([a-z]+)`", listed.group(1)) == [p.value for p in Provider]


def test_every_file_the_checklist_names_exists() -> None:
    paths = re.findall(r"`((?:libs|services|clients|src|tests|docs)/[^`]+)`", checklist())
    assert len(paths) >= 6
    missing = [p for p in paths if not any(ROOT.glob(p.replace("<name>", "*")))]
    assert missing == []
