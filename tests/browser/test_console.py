"""The console in real Chromium against the real stack: signing in (a wrong key told so clearly, the key kept
out of URLs and local storage), a generation made with the form followed live to a playing video, rows of the
list updating live, an endpoint on a local receiver with its delivery's every attempt and a retry, secret
rotation, and a prompt full of markup shown as text. Every page passes axe-core with no serious or critical
violation, and is saved as a screenshot for docs/console.md."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from playwright.async_api import FilePayload, expect

from tests.browser.conftest import Console, check_page
from tests.support.generations import insert_generation
from tests.support.images import solid_image
from tests.support.receivers import Reply, always, failing, receiving
from tests.support.stack import Stack, generate, read_generation, subscribe
from tests.support.waiting import eventually
from videogen_common.domain import Provider
from videogen_common.store import Store

pytestmark = pytest.mark.e2e
LONG = 60_000  # ms: a generation takes the mock's latency plus the pipeline's hops
SECRET = re.compile(r"^whsec_[A-Za-z0-9+/]{43}=$")


async def test_a_wrong_key_is_refused_clearly_and_the_right_one_signs_in_and_out(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    await console.open()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    await check_page(page, "sign-in")

    await console.sign_in("vg_not_a_key")
    alert = page.get_by_role("alert")
    await expect(alert).to_contain_text("That API key was not accepted (401 Unauthorized)")
    await expect(page.get_by_label("API key")).to_have_attribute("aria-invalid", "true")
    await check_page(page, "sign-in-refused")

    await console.sign_in(console_stack.key)
    await expect(page.get_by_role("heading", level=1)).to_have_text("Generations")
    await expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    stored = await page.evaluate(
        "() => [sessionStorage.getItem('videogen.apiKey'), localStorage.getItem('videogen.apiKey')]"
    )
    assert stored == [console_stack.key, None]  # this tab only: "remember" was not ticked
    assert console_stack.key not in page.url

    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    stored = await page.evaluate(
        "() => [sessionStorage.getItem('videogen.apiKey'), localStorage.getItem('videogen.apiKey')]"
    )
    assert stored == [None, None]

    await console.sign_in(console_stack.key, remember=True)
    await expect(page.get_by_role("heading", level=1)).to_have_text("Generations")
    assert await page.evaluate("() => localStorage.getItem('videogen.apiKey')") == console_stack.key
    await page.get_by_role("button", name="Sign out").click()
    assert await page.evaluate("() => localStorage.getItem('videogen.apiKey')") is None

    # With the keyboard alone: the key field has the focus, Enter signs in, the focus moves to the new
    # page's heading, and the next Tab lands on a control with a visible focus outline.
    await expect(page.get_by_label("API key")).to_be_focused()
    await page.keyboard.type(console_stack.key)
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("heading", level=1, name="Generations")).to_be_focused()
    await page.keyboard.press("Tab")
    await expect(page.get_by_role("link", name="New generation").last).to_be_focused()
    outline = await page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none"), outline
    assert console.errors == [] or all("401" in e for e in console.errors), console.errors


async def test_a_generation_made_with_the_form_is_followed_live_until_its_video_plays(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/generations/new", "New generation")
    # Every field of the request schema is on the form, the optional one marked so.
    for label in ("Prompt", "Provider", "Duration", "Deadline Seconds (optional)"):
        await expect(page.get_by_label(label, exact=True)).to_be_visible()
    await check_page(page, "new-generation")

    await page.get_by_label("Prompt", exact=True).fill("a paper boat on a rainy street")
    await page.get_by_label("Provider", exact=True).select_option("mock")
    await page.get_by_label("Duration", exact=True).fill("3")
    # What the video should be: portrait, seeded, tagged with the tenant's id, opening on their image.
    await page.get_by_label("Aspect Ratio (optional)", exact=True).select_option("9:16")
    await page.get_by_label("Seed (optional)", exact=True).fill("5")
    await page.get_by_label("Metadata (optional)", exact=True).fill("order_id=42")
    frame = FilePayload(name="frame.png", mimeType="image/png", buffer=solid_image((40, 190, 60)))
    await page.get_by_label("Image (optional): a file", exact=True).set_input_files(frame)
    await page.get_by_role("button", name="Generate").click()

    await expect(page.get_by_role("heading", level=1)).to_contain_text("Generation gen_")
    facts = page.locator("#generation-facts")
    for shown in ("9:16", "Metadata: order_id", "42", "upload upl_"):
        await expect(facts).to_contain_text(shown)
    status = page.locator("#generation-status")
    # The page shows it running, with its progress, then finished: the stream moved it, not a reload.
    await expect(status).to_have_text("processing", timeout=LONG)
    await expect(page.locator("#generation-progress")).to_be_visible()
    await page.wait_for_function(
        "() => { const p = document.querySelector('#generation-progress');"
        " return !p || (p.hasAttribute('value') && p.value > 0); }",
        timeout=LONG,
    )
    await expect(status).to_have_text("completed", timeout=LONG)
    await expect(page.locator("#generation-progress")).to_have_count(0)
    await expect(page.locator("#timeline li")).to_have_count(2)
    await expect(page.locator("#timeline")).to_contain_text("processing")
    await expect(page.locator("#timeline")).to_contain_text("completed")

    video = page.locator("video#video")
    await expect(video).to_be_visible()
    await page.wait_for_function("() => document.querySelector('video#video').readyState >= 2", timeout=LONG)
    await page.evaluate("() => document.querySelector('video#video').play()")
    await page.wait_for_function("() => document.querySelector('video#video').currentTime > 0", timeout=LONG)
    await page.wait_for_function(
        "() => { const i = document.querySelector('#thumbnail');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    await page.evaluate("() => document.querySelector('video#video').pause()")
    size = await page.evaluate(
        "() => { const v = document.querySelector('video#video'); return [v.videoWidth, v.videoHeight]; }"
    )
    assert size == [360, 640]  # 9:16 at the mock's default resolution
    await check_page(page, "generation")

    # A generation made elsewhere shows up in the list processing, and its row turns completed by itself.
    async with aiohttp.ClientSession() as session:
        code, made = await generate(session, console_stack.base, console_stack.key, "a lighthouse at dusk")
    assert code == 202
    await console.go("#/generations", "Generations")
    row = page.locator(f"tr[data-id='{made['id']}']")
    await expect(row.locator(".status")).to_have_text("processing")
    await expect(row.locator(".status")).to_have_text("completed", timeout=LONG)
    await expect(page.locator("#generations tbody tr")).to_have_count(2)

    # Filters are the API's: completed ones only, one per page, paged with the cursor.
    await page.get_by_role("checkbox", name="completed").check()
    await page.get_by_label("Per page").select_option("10")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page.locator("#generations tbody tr")).to_have_count(2)
    await page.get_by_role("checkbox", name="completed").uncheck()
    await page.get_by_role("checkbox", name="failed").check()
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page.locator("#generations tbody")).to_have_text("No generations match.")
    await page.get_by_role("checkbox", name="failed").uncheck()
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page.locator("#generations tbody tr")).to_have_count(2)
    await check_page(page, "generations")

    # Readable at 375 px: nothing wider than the screen but the table, which scrolls in its own box.
    await page.set_viewport_size({"width": 375, "height": 800})
    assert await page.evaluate("() => document.documentElement.scrollWidth") <= 375
    await check_page(page, "generations-375px")
    assert console.errors == [], console.errors


async def test_an_endpoint_on_a_local_receiver_shows_every_attempt_retries_and_rotates(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    await console.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=console_stack.base)
    async with receiving(failing(1)) as receiver:
        await console.open()
        await console.sign_in(console_stack.key)
        await console.go("#/webhooks", "Webhooks")
        await expect(page.locator("#webhooks")).to_have_text("No endpoints yet.")
        await check_page(page, "webhooks-empty")

        await page.get_by_label("URL").fill(receiver.url("/hook"))
        await page.get_by_role("button", name="Add endpoint").click()
        await expect(page.locator("#secret-panel")).to_be_visible()
        secret = (await page.locator("#secret-value").text_content() or "").strip()
        assert SECRET.match(secret), secret
        await page.get_by_role("button", name="Copy secret").click()
        await expect(page.locator("#secret-panel")).to_contain_text("Copied.")
        assert await page.evaluate("() => navigator.clipboard.readText()") == secret
        row = page.locator("#webhooks tbody tr")
        await expect(row).to_have_count(1)
        await expect(row).to_contain_text("Active")
        await check_page(page, "webhooks")

        await row.get_by_role("link").click()
        await expect(page.get_by_role("heading", level=1)).to_contain_text("Endpoint wh_")
        await expect(page.locator("#secret-panel")).to_have_count(0)  # shown once, at creation
        await expect(page.locator("#webhook-url")).to_have_text(receiver.url("/hook"))

        # A test event: the receiver fails the first attempt with a 500, the retry half a second later passes.
        await page.get_by_role("button", name="Send test event").click()
        delivery = page.locator("#deliveries-table tbody tr").first
        await expect(delivery).to_have_attribute("data-status", "succeeded", timeout=LONG)
        attempts = delivery.locator("ul.attempts li")
        await expect(attempts).to_have_count(2)
        await expect(attempts.nth(0)).to_contain_text("500")
        await expect(attempts.nth(1)).to_contain_text("200")
        await expect(attempts.nth(1)).to_contain_text(" ms")
        first, second = receiver.requests[0], receiver.requests[1]
        assert first.headers["webhook-id"] == second.headers["webhook-id"]
        expected = hmac.new(secret.encode(), second.body, hashlib.sha256).hexdigest()
        assert second.headers["X-Service-Signature"] == expected  # signed with the secret the page showed

        # Retry it: a third attempt, same webhook-id, shown in the row once it is done.
        await delivery.get_by_role("button", name=re.compile("^Retry delivery")).click()
        await expect(delivery.locator("ul.attempts li")).to_have_count(3, timeout=LONG)
        await expect(delivery).to_have_attribute("data-status", "succeeded")
        third = await receiver.request(3)
        assert third.headers["webhook-id"] == first.headers["webhook-id"]
        await check_page(page, "webhook")

        # The delivery's own page: each attempt's time, status code, latency and error.
        delivery_id = await delivery.get_attribute("data-id")
        await delivery.get_by_role("link", name=str(delivery_id)).click()
        await expect(page.get_by_role("heading", level=1)).to_contain_text(f"Delivery {delivery_id}")
        attempt_rows = page.locator("#attempts tbody tr")
        await expect(attempt_rows).to_have_count(3)
        await expect(attempt_rows.nth(0)).to_contain_text("500")
        await check_page(page, "delivery")
        # Its event, one link away: what happened, about what, and the data every attempt carried.
        await page.get_by_role("link", name=re.compile("^evt_")).click()
        await expect(page.get_by_role("heading", level=1)).to_contain_text("Event evt_")
        await expect(page.locator("dl.facts")).to_contain_text("webhook.test")
        assert (
            json.loads(await page.locator("#event-data").text_content() or "")
            == json.loads(first.body)["data"]
        )
        await page.get_by_role("link", name=re.compile("^wh_")).click()
        await expect(page.get_by_role("heading", level=1)).to_contain_text("Endpoint wh_")

        # Filtered by status: it has no failed delivery; nothing failed to recover either.
        await page.get_by_label("Status", exact=True).select_option("failed")
        await page.get_by_role("button", name="Apply", exact=True).click()
        await expect(page.locator("#deliveries-table tbody")).to_have_text("No deliveries match.")
        await page.get_by_role("button", name="Recover failed deliveries").click()
        await expect(page.locator("#deliveries-outcome")).to_contain_text("0 failed deliveries queued again.")

        # Rotate: a new secret, shown once; the next delivery is signed with it (beside the old one).
        await page.get_by_role("button", name="Rotate secret").click()
        await expect(page.locator("#secret-panel")).to_contain_text("Secret rotated")
        rotated = (await page.locator("#secret-value").text_content() or "").strip()
        assert SECRET.match(rotated) and rotated != secret
        await page.get_by_role("button", name="Send test event").click()
        fourth = await receiver.request(4, timeout=30)
        signatures = fourth.headers["X-Service-Signature"].split(" ")
        assert hmac.new(rotated.encode(), fourth.body, hashlib.sha256).hexdigest() in signatures

        # Edit its events, disable and enable it, delete it.
        await page.get_by_role("checkbox", name="video.failed").uncheck()
        await page.get_by_role("button", name="Save events").click()
        await expect(page.locator("#webhook-outcome")).to_contain_text("Events saved.")
        await expect(page.locator("#webhook-facts")).to_contain_text("video.completed")
        await expect(page.locator("#webhook-facts")).not_to_contain_text("video.failed")
        await page.get_by_role("button", name="Disable endpoint").click()
        await expect(page.locator("#webhook-health")).to_have_text(re.compile("^Disabled"))
        await page.get_by_role("button", name="Enable endpoint").click()
        await expect(page.locator("#webhook-health")).to_have_text("Active")
        await page.get_by_role("button", name="Delete endpoint").click()
        await page.get_by_role("button", name="Yes, delete it").click()
        await expect(page.get_by_role("heading", level=1)).to_have_text("Webhooks")
        await expect(page.locator("#webhooks")).to_have_text("No endpoints yet.")
    assert console.dialogs == [] and console.errors == [], (console.dialogs, console.errors)


async def test_a_prompt_full_of_markup_is_shown_as_text_and_runs_nothing(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    prompt = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/generations/new", "New generation")
    await page.get_by_label("Prompt", exact=True).fill(prompt)
    await page.get_by_label("Duration", exact=True).fill("3")
    await page.get_by_role("button", name="Generate").click()
    await expect(page.locator("#generation-prompt")).to_have_text(prompt)
    await expect(page.locator("#generation-status")).to_have_text("completed", timeout=LONG)
    await console.go("#/generations", "Generations")
    await expect(page.get_by_role("link", name=prompt, exact=True)).to_be_visible()
    assert await page.locator("img[src='x']").count() == 0
    assert await page.locator("main script").count() == 0
    await check_page(page, "generations-markup-prompt")
    assert console.dialogs == [], console.dialogs
    assert console.errors == [], console.errors


async def test_the_routing_fields_render_usably_and_the_generation_page_shows_every_attempt(
    console: Console, console_stack: Stack, stack_store: Store
) -> None:
    page = console.page
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/generations/new", "New generation")
    # The request's routing fields, from its schema: "auto" among the providers, the fallbacks in order, the
    # sort as a choice, fallback on failure as a box to tick.
    await page.get_by_label("Provider", exact=True).select_option("auto")
    await page.get_by_label("Fallback Providers (optional)", exact=True).fill("mock")
    await page.get_by_label("Routing: sort (optional)", exact=True).select_option("price")
    await page.get_by_label("Fallback On Failure (optional)", exact=True).check()
    await page.get_by_label("Prompt", exact=True).fill("a kite over the dunes")
    await page.get_by_label("Duration", exact=True).fill("3")
    await page.get_by_role("button", name="Generate").click()

    await expect(page.get_by_role("heading", level=1)).to_contain_text("Generation gen_")
    await expect(page.locator("#generation-route")).to_contain_text("mock first: auto, price order, #1")
    await expect(page.locator("#generation-status")).to_have_text("completed", timeout=LONG)
    rows = page.locator("#generation-attempts tbody tr")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("mock")
    await expect(rows.first).to_contain_text("made the video")
    await expect(page.locator("#generation-cost")).to_have_text("$0.0000")

    # A generation that moved on: both tries, in order, each with how it ended and what it cost, as the
    # orchestrator keeps them.
    now = datetime.now(UTC)
    moved = await insert_generation(
        stack_store,
        now - timedelta(minutes=2),
        account_id="acme",
        provider=Provider.LUMA,
        duration=5,
        status="completed",
        cost=0.71,
        route={
            "requested": "auto",
            "sort": None,
            "fallback_on_failure": False,
            "candidates": [{"provider": "runway", "reason": "auto"}, {"provider": "luma", "reason": "auto"}],
            "skipped": [],
            "reason": "moved on to luma after runway failed (provider_unavailable)",
        },
        provider_attempts=[
            {"provider": "runway", "started_at": now - timedelta(seconds=90),
             "ended_at": now - timedelta(seconds=89), "error_code": "provider_unavailable", "cost": 0.0},
            {"provider": "luma", "started_at": now - timedelta(seconds=88),
             "ended_at": now - timedelta(seconds=30), "error_code": None, "cost": 0.71},
        ],
    )  # fmt: skip
    await console.go(f"#/generations/{moved['_id']}", "Generation")
    rows = page.locator("#generation-attempts tbody tr")
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0)).to_contain_text("runway")
    await expect(rows.nth(0)).to_contain_text("provider_unavailable")
    await expect(rows.nth(1)).to_contain_text("luma")
    await expect(rows.nth(1)).to_contain_text("$0.7100")
    await expect(page.locator("#generation-route")).to_have_text(
        "moved on to luma after runway failed (provider_unavailable)"
    )
    await check_page(page, "generation-attempts")
    assert console.errors == [], console.errors


async def test_a_failed_generation_shows_its_error_code_and_message(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    async with aiohttp.ClientSession() as session:
        # "#fail" in a prompt makes the mock provider fail the render.
        code, made = await generate(session, console_stack.base, console_stack.key, "a storm at sea #fail")
        assert code == 202
        await console.open(f"#/generations/{made['id']}")
        await console.sign_in(console_stack.key)
        await expect(page.locator("#generation-status")).to_have_text("failed", timeout=LONG)
        failed = await read_generation(session, console_stack.base, console_stack.key, made["id"])
    await expect(page.locator("#error-code")).to_have_text(failed["error"]["code"])
    await expect(page.locator("#error-message")).to_have_text(failed["error"]["message"])
    await expect(page.get_by_role("button", name="Cancel generation")).to_be_hidden()
    await expect(page.locator("#timeline li")).to_have_count(len(failed["timeline"]))
    await check_page(page, "generation-failed")


async def test_an_endpoint_that_always_fails_shows_its_failures_and_recovers_them(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    async with receiving(always(Reply(500))) as receiver, aiohttp.ClientSession() as session:
        hook = await subscribe(
            session, console_stack.base, console_stack.key, receiver.url("/down"), ["video.failed"]
        )
        headers = {"Authorization": f"Bearer {console_stack.key}"}
        async with session.post(f"{console_stack.base}/v1/webhooks/{hook['id']}/test", headers=headers) as r:
            assert r.status == 202
        await console.open(f"#/webhooks/{hook['id']}")
        await console.sign_in(console_stack.key)
        delivery = page.locator("#deliveries-table tbody tr").first
        # The first attempt and the two retries of the schedule, all answered 500: failed for good.
        await expect(delivery).to_have_attribute("data-status", "failed", timeout=LONG)
        await expect(delivery.locator("ul.attempts li")).to_have_count(3)
        await expect(delivery.locator("ul.attempts li").first).to_contain_text("500")
        await page.get_by_label("Status", exact=True).select_option("failed")
        await page.get_by_role("button", name="Apply", exact=True).click()
        await expect(page.locator("#deliveries-table tbody tr")).to_have_count(1)
        await page.get_by_label("Status", exact=True).select_option("")
        await page.get_by_role("button", name="Apply", exact=True).click()

        await page.get_by_role("button", name="Recover failed deliveries").click()
        await expect(page.locator("#deliveries-outcome")).to_contain_text("1 failed delivery queued again.")
        await receiver.request(4, timeout=30)  # sent again
        # Its schedule goes on from the attempts already made: one more, and it has failed again.
        await expect(delivery.locator("ul.attempts li")).to_have_count(4, timeout=LONG)
        await expect(delivery).to_have_attribute("data-status", "failed")
        await check_page(page, "webhook-failing")

        # The list's health column counts it among the last day's failures.
        await console.go("#/webhooks", "Webhooks")
        row = page.locator(f"#webhooks tr[data-id='{hook['id']}']")
        await expect(row).to_contain_text("Active")
        await expect(row.locator("td").nth(3)).to_have_text("1")
        async with session.delete(f"{console_stack.base}/v1/webhooks/{hook['id']}", headers=headers) as r:
            assert r.status == 204


async def test_a_waiting_generation_is_canceled_from_its_page(console: Console, console_stack: Stack) -> None:
    page = console.page
    async with aiohttp.ClientSession() as session:
        # The account may have one generation in flight: the last of these waits for the four before it, one
        # after another (the mock's 3 s each), so it is still unfinished when the page cancels it.
        ahead = []
        for n in range(4):
            code, made = await generate(session, console_stack.base, console_stack.key, f"a train, car {n}")
            assert code == 202
            ahead.append(made["id"])

        async def read(generation_id: str) -> dict[str, Any]:
            return await read_generation(session, console_stack.base, console_stack.key, generation_id)

        async def one_waits_for_the_account() -> bool:
            for generation_id in ahead:
                if (await read(generation_id)).get("queue_reason") == "account_concurrency":
                    return True
            return False

        # The requests reach the orchestrator on several partitions, in no set order: the last is made only
        # once the account is full and one of the four waits, so it cannot be the one that starts first.
        await eventually(one_waits_for_the_account, 60, "one of the four waits for the account's limit")
        code, waiting = await generate(session, console_stack.base, console_stack.key, "a kite in the wind")
        assert code == 202
        await console.open(f"#/generations/{waiting['id']}")
        await console.sign_in(console_stack.key)
        await expect(page.locator("#generation-status")).not_to_have_text("failed")
        # It waits in line behind the account's others, and the page says so (and where, once read alone).
        await expect(page.locator("#generation-waiting")).to_contain_text("your account's limit")
        await page.reload()
        await expect(page.locator("#generation-waiting")).to_contain_text("of yours in line at mock")
        await page.get_by_role("button", name="Cancel generation").click()
        await expect(page.locator("#generation-status")).to_have_text("failed")
        canceled = await read(waiting["id"])
        assert canceled["status"] == "failed" and canceled["error"]["code"] == "canceled"
        await expect(page.locator("#error-code")).to_have_text("canceled")
        await expect(page.get_by_role("button", name="Cancel generation")).to_be_hidden()
        await check_page(page, "generation-canceled")
        # The others were not touched: they go on.
        for generation_id in ahead:
            assert (await read(generation_id))["status"] != "failed"


async def test_a_generation_is_deleted_from_its_page_once_confirmed(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    async with aiohttp.ClientSession() as session:
        code, made = await generate(
            session, console_stack.base, console_stack.key, "a private birthday video"
        )
        assert code == 202

        async def read() -> dict[str, Any]:
            return await read_generation(session, console_stack.base, console_stack.key, made["id"])

        await console.open(f"#/generations/{made['id']}")
        await console.sign_in(console_stack.key)
        await expect(page.locator("#generation-status")).to_have_text("completed", timeout=LONG)
        await expect(page.locator("video#video")).to_be_visible()
        completed = await read()

        # Asked first; "Keep it" keeps it.
        await page.get_by_role("button", name="Delete generation").click()
        confirm = page.get_by_role("group", name="Confirm deletion")
        await expect(confirm).to_contain_text("Delete this generation for good?")
        await expect(page.get_by_role("button", name="Keep it")).to_be_focused()
        await check_page(page, "generation-delete-confirm")
        await page.get_by_role("button", name="Keep it").click()
        await expect(confirm).to_have_count(0)
        await expect(page.get_by_role("button", name="Delete generation")).to_be_focused()
        assert (await read())["deleted"] is False

        await page.get_by_role("button", name="Delete generation").click()
        await page.get_by_role("button", name="Yes, delete it").click()
        await expect(page.locator("#generation-deleted")).to_be_visible()
        await expect(page.locator("#generation-prompt")).to_have_text("erased")
        await expect(page.locator("video#video")).to_have_count(0)
        await expect(page.locator("#media")).to_contain_text("Deleted")
        await expect(page.get_by_role("button", name="Delete generation")).to_be_hidden()
        await expect(page.get_by_role("button", name="Cancel generation")).to_be_hidden()
        await check_page(page, "generation-deleted")
        tombstone = await read()
        assert tombstone["deleted"] and tombstone["prompt"] == "" and tombstone["video_url"] is None
        async with session.get(completed["video_url"]) as answer:
            assert answer.status == 410

        # The list leaves it out.
        await console.go("#/generations", "Generations")
        await expect(page.locator("#generations caption")).to_have_text("Newest first. Page 1.")
        assert await page.locator(f"tr[data-id='{made['id']}']").count() == 0
    assert console.errors == [], console.errors


async def test_the_form_picks_a_model_of_the_chosen_provider_with_its_price(
    console: Console, console_stack: Stack
) -> None:
    page = console.page
    await console.open()
    await console.sign_in(console_stack.key)
    await console.go("#/generations/new", "New generation")
    picker = page.get_by_label("Model (optional)", exact=True)
    await expect(picker).to_be_visible()
    # The chosen provider's models (GET /v1/models), each with its price; a provider not offered here: none.
    await page.get_by_label("Provider", exact=True).select_option("mock")
    await expect(picker.locator("option")).to_have_text(
        ["The provider's default model", "mock (default) — any $0/s"]
    )
    await page.get_by_label("Provider", exact=True).select_option("luma")
    await expect(picker.locator("option")).to_have_text(["The provider's default model"])
    await page.get_by_label("Provider", exact=True).select_option("auto")
    await expect(picker.locator("option")).to_have_text(
        ["The provider's default model", "mock: mock (default) — any $0/s"]
    )
    await check_page(page, "new-generation-model")

    await page.get_by_label("Provider", exact=True).select_option("mock")
    await picker.select_option("mock")
    await page.get_by_label("Prompt", exact=True).fill("a heron at dawn")
    await page.get_by_label("Duration", exact=True).fill("3")
    await page.get_by_role("button", name="Generate").click()
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Generation gen_")
    await expect(page.locator("#generation-model")).to_have_text("mock")
    assert console.errors == [], console.errors
