"""The API reference at /docs in real Chromium against the real stack: the viewer (Swagger UI, served by the
api from a pinned package) shows every operation of the served document, and "Try it out" calls this api
with the key the reader gives, answering as the API does; its Content-Security-Policy blocks nothing the page
needs."""

from __future__ import annotations

import aiohttp
import pytest
from playwright.async_api import expect

from tests.browser.conftest import Console
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

LONG = 20_000


async def test_the_reference_shows_every_operation_and_tries_a_call_with_the_readers_key(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{console_stack.base}/openapi.json") as response,
    ):
        document = await response.json()
    await page.goto(f"{console_stack.base}/docs")

    operations = [(m, p) for p, item in document["paths"].items() for m in item]
    await expect(page.locator(".opblock")).to_have_count(len(operations), timeout=LONG)
    shown = await page.locator(".opblock-summary-path").all_inner_texts()
    assert sorted(text.replace("\u200b", "") for text in shown) == sorted(p for _, p in operations)

    # Without a key, the API refuses; with the reader's key (given under Authorize), it answers.
    providers = page.locator("#operations-Generations-listProviders")
    await providers.locator(".opblock-summary").click()
    await providers.get_by_role("button", name="Try it out").click()
    await providers.get_by_role("button", name="Execute").click()
    await expect(
        providers.locator(".live-responses-table tbody td.response-col_status").first
    ).to_contain_text("401")

    await page.locator("button.authorize").first.click()
    await page.locator(".auth-container input").fill(console_stack.key)
    await page.locator(".auth-btn-wrapper button.authorize").click()
    await page.locator(".auth-btn-wrapper button.btn-done").click()
    await providers.get_by_role("button", name="Execute").click()
    await expect(
        providers.locator(".live-responses-table tbody td.response-col_status").first
    ).to_contain_text("200")
    await expect(providers.locator(".live-responses-table")).to_contain_text('"mock"')

    assert not [e for e in console.errors if "Content Security Policy" in e or "Refused to" in e]
    assert console.dialogs == []
