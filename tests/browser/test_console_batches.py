"""The console's batches pages in real Chromium against the real stack (the mock takes 5 s; one generation of
the account at a provider at a time, so a batch's items end one by one): a batch made through the API is
listed, and its page shows its progress bar and counts moving until it has completed, its items filtered by
state, and its results file downloaded; another batch is canceled midway on its page, which says what was
canceled and what had started and could not be, and follows the counts to the end. Every page passes axe-core
with no serious or critical violation, and is saved for docs/console.md. No sleeps: every wait is on what the
page shows."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Page, expect

from tests.browser.conftest import Console, check_page, stack_env
from tests.support.engines import Engines
from tests.support.stack import Stack, own_stack

pytestmark = pytest.mark.e2e
LONG = 90_000  # ms: a batch's items run one after the other, each the mock's latency and the pipeline's hops


# The mock takes this long here (the module's own stack): an item that has started is still at the provider
# when the test, having seen it start, cancels the batch.
MOCK_LATENCY_MS = 5000


@pytest.fixture(scope="module")
async def console_stack(engines: Engines, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    """The console's stack (conftest's), its mock slower."""
    workdir = tmp_path_factory.mktemp("console-batches")
    env = {**stack_env(engines, workdir / "data"), "VIDEOGEN_MOCK_LATENCY_MS": str(MOCK_LATENCY_MS)}
    async with own_stack(env, workdir / "logs") as stack:
        yield stack


def item(n: int, prompt: str | None = None) -> dict[str, Any]:
    return {
        "prompt": prompt or f"a lantern on a pier, take {n}",
        "provider": "mock",
        "duration": 3,
        "custom_id": f"i{n}",
    }


async def create_batch(stack: Stack, items: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{stack.base}/v1/batches",
            json={"items": items, **options},
            headers={"Authorization": f"Bearer {stack.key}"},
        ) as response,
    ):
        assert response.status == 202, await response.text()
        made: dict[str, Any] = await response.json()
        return made


# Records the value of every progress bar the batch page draws (it draws a new one at each read).
SHOWN = """() => {
  window.shownProgress = [document.querySelector('#batch-progress').value];
  new MutationObserver(() => {
    const bar = document.querySelector('#batch-progress');
    if (bar && bar.value !== window.shownProgress.at(-1)) window.shownProgress.push(bar.value);
  }).observe(document.querySelector('#batch-progress-slot'), {childList: true, subtree: true});
}"""


def count(page: Page, name: str) -> Any:
    return page.locator(f"#batch-counts dd[data-count='{name}']")


async def progress_of(page: Page) -> tuple[float, float]:
    value, top = await page.evaluate(
        "() => { const p = document.querySelector('#batch-progress'); return [p.value, p.max]; }"
    )
    return float(value), float(top)


async def test_a_batch_is_followed_to_completed_and_its_results_downloaded(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/batches", "Batches")
    # Made once the page is open, so the page sees it from its start.
    items = [item(0), item(1), item(2), item(3, "a storm at sea #fail")]
    batch = await create_batch(console_stack, items, metadata={"job": "catalogue"})
    await page.get_by_role("button", name="Refresh").click()
    row = page.locator(f"#batches tr[data-id='{batch['id']}']")
    await expect(row).to_contain_text("job=catalogue")
    await expect(row.get_by_role("progressbar")).to_be_visible()
    await row.get_by_role("link", name=batch["id"]).click()
    await expect(page.get_by_role("heading", level=1)).to_contain_text(f"Batch {batch['id']}")
    status = page.locator("#batch-status")
    bar = page.get_by_role("progressbar", name="items ended")
    await expect(bar).to_be_visible()
    await expect(count(page, "total")).to_have_text("4")
    await expect(page.locator("#batch-items tbody tr")).to_have_count(4)
    await expect(page.locator("#batch-facts")).to_contain_text("catalogue")
    # Running: the cancel button offered, no results yet.
    await expect(status).to_have_text("in_progress")
    await expect(page.get_by_role("button", name="Cancel batch")).to_be_visible()
    await expect(page.get_by_role("button", name="Download results (JSONL)")).to_be_hidden()
    # Every value the bar shows from now on, recorded by the page itself (the page draws it anew each read).
    await page.evaluate(SHOWN)

    # The counts move as the items end (one at a time), the bar with them, without a reload: it is seen
    # part of the way, then all of it.
    await expect(count(page, "completed")).not_to_have_text("0", timeout=LONG)
    await check_page(page, "batch-running")
    await expect(status).to_have_text("completed", timeout=LONG)
    await expect(count(page, "completed")).to_have_text("3")
    await expect(count(page, "failed")).to_have_text("1")
    await expect(count(page, "processing")).to_have_text("0")
    assert await progress_of(page) == (4, 4)
    await expect(page.locator("#batch-progress-label")).to_have_text("4 of 4 items ended (100%)")
    shown = await page.evaluate("() => window.shownProgress")
    assert shown == sorted(shown) and shown[-1] == 4, shown  # it only moved forward, to the end
    assert any(0 < value < 4 for value in shown), shown  # and was seen on its way
    await expect(page.locator("#batch-finished")).not_to_have_text("not yet")
    await expect(page.get_by_role("button", name="Cancel batch")).to_be_hidden()
    await check_page(page, "batch-completed")

    # Its items by state: the failed one alone, with its error.
    await page.get_by_label("State").select_option("failed")
    await page.get_by_role("button", name="Show items").click()
    await expect(page.locator("#batch-items tbody tr")).to_have_count(1)
    await expect(page.locator("#batch-items tbody tr")).to_contain_text("i3")
    await expect(page.locator("#batch-items tbody tr")).to_contain_text("failed")
    await page.get_by_label("State").select_option("")
    await page.get_by_label("Custom id").fill("i1")
    await page.get_by_role("button", name="Show items").click()
    await expect(page.locator("#batch-items tbody tr")).to_have_count(1)
    await expect(page.locator("#batch-items tbody tr").get_by_role("link", name="video")).to_be_visible()

    # The results file, downloaded as the API streams it: one line per item, in the order given.
    async with page.expect_download() as waiting:
        await page.get_by_role("button", name="Download results (JSONL)").click()
    download = await waiting.value
    assert download.suggested_filename == f"{batch['id']}-results.jsonl"
    path = await download.path()
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert [(r["custom_id"], r["status"]) for r in lines] == [
        ("i0", "completed"),
        ("i1", "completed"),
        ("i2", "completed"),
        ("i3", "failed"),
    ]
    assert console.errors == [], console.errors


async def test_a_batch_canceled_midway_shows_what_could_not_be_canceled_and_its_counts(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    batch = await create_batch(console_stack, [item(n) for n in range(4)])
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go(f"#/batches/{batch['id']}", "Batch")
    # Wait for an item to have started at the provider (its progress shows in the items table).
    started = page.locator("#batch-items tbody tr", has=page.locator(".item-progress"))
    await expect(started).to_have_count(1, timeout=LONG)
    started_id = await started.get_attribute("data-id")
    assert started_id is not None

    await page.get_by_role("button", name="Cancel batch").click()
    confirm = page.get_by_role("group", name="Confirm canceling the batch")
    await expect(confirm).to_be_visible()
    await confirm.get_by_role("button", name="Yes, cancel it").click()

    outcome = page.locator("#batch-outcome")
    await expect(outcome.locator("#canceled-count")).to_have_text("Canceled 3 items.")
    await expect(outcome).to_contain_text("1 had started and could not be canceled")
    await expect(outcome.locator("#not-canceled li")).to_have_text([started_id])
    await expect(count(page, "canceled")).to_have_text("3")
    await expect(page.locator("#batch-status")).to_have_text("canceling")
    await expect(page.get_by_role("button", name="Cancel batch")).to_be_hidden()
    await check_page(page, "batch-canceling")

    # The one that had started finishes; then the batch is canceled, its counts final.
    await expect(page.locator("#batch-status")).to_have_text("canceled", timeout=LONG)
    await expect(count(page, "completed")).to_have_text("1")
    await expect(count(page, "canceled")).to_have_text("3")
    await expect(count(page, "processing")).to_have_text("0")
    await expect(count(page, "queued")).to_have_text("0")
    assert await progress_of(page) == (4, 4)
    await expect(page.get_by_role("button", name="Download results (JSONL)")).to_be_visible()

    # The list shows it canceled.
    await console.go("#/batches", "Batches")
    await expect(page.locator(f"#batches tr[data-id='{batch['id']}'] .status")).to_have_text("canceled")
    await check_page(page, "batches")
    assert console.errors == [], console.errors
