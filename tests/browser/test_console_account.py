"""The console's account pages in real Chromium against the real stack: a key made on the API keys page (its
secret shown once and copied) works for a plain HTTP call within its scopes and stops working once revoked
there; the usage chart shows the right seconds per day and provider for a seeded mix of days, providers and
statuses, read from the page (its table, legend and the chart's own segments); budgets set on their page are
what the API then holds and shows as left; the audit page lists the changes. Every page passes axe-core and
is saved for docs/console.md."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest
from playwright.async_api import expect

from tests.browser.conftest import Console, check_page
from tests.support.generations import insert_generation
from tests.support.stack import Stack
from videogen_common.domain import Provider, Status
from videogen_common.store import Store

pytestmark = pytest.mark.e2e


async def status_with(base: str, key: str, method: str, path: str, body: object = None) -> int:
    """One plain HTTP call with ``key``, as curl would make it."""
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, f"{base}{path}", json=body, headers={"Authorization": f"Bearer {key}"}) as r,
    ):
        return r.status


async def test_a_key_made_on_the_keys_page_works_and_stops_when_revoked_there(
    console: Console, console_stack: Stack
) -> None:
    page, base = console.page, console_stack.base
    await console.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/keys", "API keys")
    await expect(page.locator("#keys-table tbody tr")).to_have_count(
        1
    )  # the stack's own, made by an operator
    await check_page(page, "keys")

    await page.get_by_label("Name", exact=True).fill("finance dashboard")
    await page.get_by_label("usage:read").check()
    await page.get_by_label("generations:read").check()
    await page.get_by_label("Daily video seconds (optional)").fill("600")
    await page.get_by_role("button", name="Make key").click()
    panel = page.locator("#secret-panel")
    await expect(panel).to_contain_text("Key “finance dashboard” made")
    secret = (await page.locator("#secret-value").text_content() or "").strip()
    assert secret.startswith("vg_")
    await page.get_by_role("button", name="Copy key").click()
    await expect(panel).to_contain_text("Copied.")
    assert await page.evaluate("() => navigator.clipboard.readText()") == secret
    row = page.locator("#keys-table tbody tr", has_text="finance dashboard")
    await expect(row).to_contain_text(f"vg_…{secret[-4:]}")
    await expect(row).to_contain_text("generations:read, usage:read")
    await expect(row).to_contain_text("daily video seconds: 600 s")
    await expect(row.locator(".key-status")).to_have_text("Active")
    assert secret not in (await page.locator("#keys-table").text_content() or "")
    await check_page(page, "keys-made")

    # The key works for what it holds, and only that.
    assert await status_with(base, secret, "GET", "/v1/usage") == 200
    assert await status_with(base, secret, "GET", "/v1/generations") == 200
    hook = {"url": "https://example.test/h", "events": ["video.failed"]}
    assert await status_with(base, secret, "POST", "/v1/webhooks", hook) == 403

    await row.get_by_role("button", name="Revoke finance dashboard").click()
    await page.get_by_role("button", name="Yes, revoke it").click()
    await expect(page.locator("#keys-outcome")).to_contain_text("Key finance dashboard revoked.")
    await expect(row.locator(".key-status")).to_have_text("Revoked")
    assert await status_with(base, secret, "GET", "/v1/usage") == 401
    await expect(page.locator("#secret-panel")).to_have_count(1)  # still this page: the secret stays as shown


async def test_a_key_without_webhooks_read_still_signs_in(console: Console, console_stack: Stack) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{console_stack.base}/v1/api-keys",
            json={"name": "usage only", "scopes": ["usage:read"]},
            headers={"Authorization": f"Bearer {console_stack.key}"},
        ) as response,
    ):
        narrow = (await response.json())["secret"]
    page = console.page
    await console.open()
    await console.sign_in(narrow)
    await expect(page.get_by_role("heading", level=1)).to_have_text("Generations")
    await expect(page.get_by_role("alert")).to_contain_text("generations:read")  # what it lacks, said plainly
    await console.go("#/usage", "Usage")
    await expect(page.locator("#usage-summary")).to_contain_text("generations")


async def test_the_usage_chart_shows_the_right_totals_for_a_seeded_mix_of_days_and_providers(
    console: Console, console_stack: Stack, stack_store: Store
) -> None:
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    # (days ago, provider, status, duration): completed ones are video made; failed ones are not.
    seeded = [
        (1, Provider.MOCK, Status.COMPLETED, 5),
        (1, Provider.MOCK, Status.COMPLETED, 3),
        (1, Provider.RUNWAY, Status.COMPLETED, 10),
        (1, Provider.LUMA, Status.FAILED, 9),
        (3, Provider.PIKA, Status.COMPLETED, 4),
        (3, Provider.RUNWAY, Status.COMPLETED, 6),
        (6, Provider.LUMA, Status.COMPLETED, 7),
        (6, Provider.MOCK, Status.FAILED, 8),
        (40, Provider.MOCK, Status.COMPLETED, 10),  # outside the range asked for
    ]
    # What each charged per second of video made (failed ones cost nothing here).
    price = {Provider.MOCK: 0.0, Provider.RUNWAY: 0.12, Provider.LUMA: 0.08, Provider.PIKA: 0.04}
    expected: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    expected_cost: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for days_ago, provider, status, duration in seeded:
        made = today - timedelta(days=days_ago)
        cost = round(duration * price[provider], 4) if status is Status.COMPLETED else 0.0
        await insert_generation(
            stack_store,
            made,
            account_id="acme",
            provider=provider,
            duration=duration,
            status=status.value,
            cost=cost,
        )
        if status is Status.COMPLETED and days_ago <= 7:
            expected[made.strftime("%Y-%m-%d")][provider.value] += duration
            if cost:
                expected_cost[made.strftime("%Y-%m-%d")][provider.value] += cost
    first, last = (
        (today - timedelta(days=7)).strftime("%Y-%m-%d"),
        (today - timedelta(days=1)).strftime("%Y-%m-%d"),
    )
    providers = [p.value for p in Provider]
    by_provider = {p: sum(day.get(p, 0) for day in expected.values()) for p in providers}
    assert by_provider == {"mock": 8, "runway": 16, "luma": 7, "pika": 4}

    page = console.page
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/usage", "Usage")
    await page.get_by_label("From (UTC day)").fill(first)
    await page.get_by_label("To (UTC day, included)").fill(last)
    await page.get_by_role("button", name="Show").click()
    await expect(page.locator("#usage-summary")).to_contain_text(f"{first} to {last}")

    # The table, day by day and provider by provider, and its totals.
    table = page.locator("#usage-table")
    rows = await table.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.day, Object.fromEntries([...r.querySelectorAll('td')]"
        ".map(c => [c.dataset.provider, Number(c.textContent)]))])"
    )
    assert {day: {p: v for p, v in cells.items() if p != "total" and v} for day, cells in rows} == {
        day: dict(values) for day, values in expected.items()
    }
    assert all(cells["total"] == sum(v for p, v in cells.items() if p != "total") for _, cells in rows)
    totals = await table.locator("tfoot td").evaluate_all(
        "cells => Object.fromEntries(cells.map(c => [c.dataset.provider, Number(c.textContent)]))"
    )
    assert totals == {**by_provider, "total": 35}
    # The legend says the same, and so does the chart: its segments, and its accessible name.
    for name, seconds in by_provider.items():
        await expect(page.locator(f"#usage-legend li[data-series='{name}']")).to_have_text(
            f"{name}: {seconds} s"
        )
    segments = await page.locator("#usage-chart svg rect[data-series]").evaluate_all(
        "rects => rects.map(r => [r.closest('g').dataset.category, r.dataset.series, Number(r.dataset.value),"
        " r.querySelector('title').textContent])"
    )
    drawn: dict[str, dict[str, int]] = defaultdict(dict)
    for day, series, seconds, title in segments:
        drawn[day][series] = seconds
        assert title == f"{day} · {series}: {seconds} s"
    assert drawn == {day: dict(values) for day, values in expected.items()}
    label = await page.locator("#usage-chart svg").get_attribute("aria-label") or ""
    assert "mock 8 s, runway 16 s, luma 7 s, pika 4 s; 35 s in all" in label
    bars = await page.locator("#usage-chart svg g.bar").count()
    assert bars == 7  # one per day of the range, empty ones included
    await check_page(page, "usage")

    # The same range by cost: the table, the legend and the chart's name in dollars.
    await page.get_by_label("Amount shown").select_option(label="Cost (USD)")
    await page.get_by_role("button", name="Show").click()
    await expect(page.locator("#usage-chart-heading")).to_have_text("Cost per day by provider (USD)")
    rows = await table.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.day, Object.fromEntries([...r.querySelectorAll('td')]"
        ".map(c => [c.dataset.provider, Number(c.textContent)]))])"
    )
    assert {day: {p: v for p, v in cells.items() if p != "total" and v} for day, cells in rows} == {
        day: {p: pytest.approx(v) for p, v in values.items()} for day, values in expected_cost.items()
    }
    cost_by_provider = {
        p: round(sum(day.get(p, 0.0) for day in expected_cost.values()), 4) for p in providers
    }
    assert cost_by_provider == {"mock": 0.0, "runway": 1.92, "luma": 0.56, "pika": 0.16}
    totals = await table.locator("tfoot td").evaluate_all(
        "cells => Object.fromEntries(cells.map(c => [c.dataset.provider, Number(c.textContent)]))"
    )
    assert totals == pytest.approx({**cost_by_provider, "total": 2.64})
    await expect(page.locator("#usage-legend li[data-series='runway']")).to_have_text("runway: $1.92")
    label = await page.locator("#usage-chart svg").get_attribute("aria-label") or ""
    assert "mock $0, runway $1.92, luma $0.56, pika $0.16; $2.64 in all" in label
    await check_page(page, "usage-cost")


async def test_budgets_set_on_their_page_are_the_apis_and_show_what_is_left(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/budgets", "Budgets")
    await page.get_by_label("Daily video seconds (optional)").fill("600")
    await page.get_by_label("Monthly video seconds (optional)").fill("-5")
    await page.get_by_role("button", name="Save budgets").click()
    await expect(page.locator("#budgets-form")).to_contain_text("A whole number of seconds")
    await page.get_by_label("Monthly video seconds (optional)").fill("10000")
    await page.get_by_label("Daily cost (USD) (optional)").fill("-0.5")
    await page.get_by_role("button", name="Save budgets").click()
    await expect(page.locator("#budgets-form")).to_contain_text("An amount of US dollars")
    await page.get_by_label("Daily cost (USD) (optional)").fill("12.5")
    await page.get_by_role("button", name="Save budgets").click()
    await expect(page.locator("#budgets-outcome")).to_contain_text("Budgets saved.")
    daily = page.locator("#budget-list li[data-budget='daily_video_seconds']")
    await expect(daily).to_contain_text("of 600 s used")
    await expect(page.locator("#budget-list li[data-budget='monthly_video_seconds']")).to_contain_text(
        "of 10000 s used"
    )
    await expect(page.locator("#budget-list li[data-budget='daily_cost']")).to_contain_text("of $12.5 used")
    await expect(page.locator("#budget-list li[data-budget='monthly_cost']")).to_have_count(0)  # no limit
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{console_stack.base}/v1/budgets", headers={"Authorization": f"Bearer {console_stack.key}"}
        ) as response,
    ):
        held = await response.json()
    assert (held["daily_video_seconds"], held["monthly_video_seconds"]) == (600, 10000)
    assert (held["daily_cost"], held["monthly_cost"]) == (12.5, None)
    await check_page(page, "budgets")
    await console.go("#/usage", "Usage")
    await expect(page.locator("#usage-budget-list li[data-budget='daily_video_seconds']")).to_contain_text(
        "600"
    )


async def test_the_audit_page_lists_the_accounts_changes(console: Console, console_stack: Stack) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{console_stack.base}/v1/api-keys",
            json={"name": "audited", "scopes": ["audit:read"]},
            headers={"Authorization": f"Bearer {console_stack.key}"},
        ) as response,
    ):
        made = await response.json()
    page = console.page
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/audit", "Audit trail")
    await page.get_by_label("Type").select_option("api_key.created")
    await page.get_by_role("button", name="Apply").click()
    row = page.locator("#audit-table tbody tr", has_text=made["id"])
    await expect(row).to_contain_text("api_key.created")
    await expect(row).to_contain_text('name: "audited"')
    # The unfiltered list (shown first) holds that row too: wait until the filter's answer replaced it.
    other = page.locator("#audit-table tbody tr[data-type]:not([data-type='api_key.created'])")
    await expect(other).to_have_count(0)
    types = await page.locator("#audit-table tbody tr[data-type]").evaluate_all(
        "rows => rows.map(r => r.dataset.type)"
    )
    assert types and set(types) == {"api_key.created"}
    await check_page(page, "audit")
