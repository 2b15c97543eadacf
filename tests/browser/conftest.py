"""The console's browser tests: one real stack per module (api, orchestrator and notifier as processes against
the session's engines) and one headless Chromium per module, driven through Playwright. The browser is the
system's (Debian's chromium package, which `make install` installs): Playwright downloads nothing."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect

from tests.support.engines import Engines
from tests.support.env import isolated_env
from tests.support.stack import Stack, own_stack
from tests.support.system_packages import require
from videogen_common.store import Store, connect

CHROMIUM = Path("/usr/bin/chromium")
# Headless, and quiet: the machine's network is closed, so nothing that phones home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# docs/console.md's pictures, refreshed only when asked (VIDEOGEN_UPDATE_SCREENSHOTS=1): a plain test run
# leaves the checkout as it found it.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "console"
UPDATE_SCREENSHOTS = os.environ.get("VIDEOGEN_UPDATE_SCREENSHOTS") == "1"
MOCK_LATENCY_MS = 3000
# How long an expectation waits for the page to show what the API answered (Playwright's default is 5 s): a
# safety net on a loaded machine, where the api, the store and Chromium share two cores with other tests.
EXPECT_TIMEOUT_MS = 20_000


def stack_env(engines: Engines, data_dir: Path) -> dict[str, str]:
    """What ``base_env`` gives one test, for a whole module, and the console's own settings."""
    return {
        **isolated_env(engines, data_dir),
        # The mock renders a real mp4 after this long, reporting progress as it goes.
        "VIDEOGEN_MOCK_LATENCY_MS": str(MOCK_LATENCY_MS),
        "VIDEOGEN_PROGRESS_WRITE_SECONDS": "0.2",
        # One generation of the account in flight at a time: later ones wait, queued (the cancel test).
        "VIDEOGEN_ACCOUNT_MAX_IN_FLIGHT": "1",
        # A failed delivery is tried again half a second later.
        "VIDEOGEN_WEBHOOK_RETRY_SCHEDULE": "0.5,0.5",
    }


@pytest.fixture(scope="module")
async def console_stack(engines: Engines, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    workdir = tmp_path_factory.mktemp("console")
    async with own_stack(stack_env(engines, workdir / "data"), workdir / "logs") as stack:
        yield stack


@pytest.fixture
async def stack_store(console_stack: Stack) -> AsyncIterator[Store]:
    """The stack's store, for a test that seeds what the page is to show."""
    client, store = connect(
        console_stack.env["VIDEOGEN_MONGO_URL"], console_stack.env["VIDEOGEN_MONGO_DB"], app_name="tests"
    )
    try:
        yield store
    finally:
        await client.close()


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    require(CHROMIUM.exists(), "chromium", "the console's browser tests")
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            await chromium.close()


@dataclass
class Console:
    """A browser tab on the console, with what it saw: dialogs opened, errors logged, pages it failed."""

    page: Page
    context: BrowserContext
    base: str
    dialogs: list[str]
    errors: list[str]

    async def open(self, fragment: str = "") -> None:
        await self.page.goto(f"{self.base}/console{fragment}")

    async def sign_in(self, key: str, *, remember: bool = False) -> None:
        await self.page.get_by_label("API key").fill(key)
        if remember:
            await self.page.get_by_label("Remember on this device").check()
        await self.page.get_by_role("button", name="Sign in").click()

    async def go(self, fragment: str, heading: str) -> None:
        """Follow the app's own navigation to ``fragment`` and wait for its page heading."""
        await self.page.evaluate("(hash) => { window.location.hash = hash; }", fragment)
        await expect(self.page.get_by_role("heading", level=1)).to_contain_text(heading)


@pytest.fixture
async def console(browser: Browser, console_stack: Stack) -> AsyncIterator[Console]:
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, base_url=console_stack.base)
    page = await context.new_page()
    seen = Console(page, context, console_stack.base, [], [])

    async def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    page.on(
        "console",
        lambda message: seen.errors.append(message.text) if message.type == "error" else None,
    )
    try:
        yield seen
    finally:
        await context.close()


AXE_SOURCE = (resources.files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")
SERIOUS = {"serious", "critical"}


async def check_page(page: Page, name: str) -> None:
    """axe-core (the copy axe-playwright-python ships, injected by the test: the page loads nothing from
    elsewhere) finds no serious or critical violation; then, when asked, the page is saved for
    docs/console.md."""
    await page.evaluate(AXE_SOURCE)
    results = await page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    serious = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in results["violations"]
        if v["impact"] in SERIOUS
    ]
    assert serious == [], f"{name}: {serious}"
    if UPDATE_SCREENSHOTS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
