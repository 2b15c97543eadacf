"""The TypeScript SDK, ``@videogen/client`` (clients/typescript), driven from here: its ``node --test`` suites
(against scripted servers on 127.0.0.1, and against one real stack shared by the module: api, orchestrator and
notifier as processes, the real broker and store, the mock provider), its types against the served OpenAPI
document, and its packed tarball installed alone into an empty folder, where a tenant's plain ``.mjs`` script
makes and downloads a video and type-checks under ``tsc --strict``. Node's output is shown when it fails."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import inspect
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from multidict import CIMultiDict
from playwright.async_api import async_playwright

import videogen_client
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.support.balancer import HOP_BY_HOP
from tests.support.engines import Engines
from tests.support.env import isolated_env
from tests.support.images import close_to, opening_colour, solid_image, video_seconds
from tests.support.stack import Stack, own_stack
from videogen.engines import free_port
from videogen_client import AsyncClient

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"
TSC = PACKAGE / "node_modules" / ".bin" / "tsc"
FRAME_COLOUR = (200, 40, 160)
NODE_TIMEOUT_S = 240


async def succeed(*argv: str | Path, cwd: Path = PACKAGE, env: dict[str, str] | None = None) -> str:
    """Run a command to success; its output (stdout and stderr), shown in full if it fails. Killed if it
    overruns."""
    process = await asyncio.create_subprocess_exec(
        *map(str, argv),
        cwd=cwd,
        env={**{k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), NODE_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    text = out.decode(errors="replace")
    assert process.returncode == 0, f"{' '.join(map(str, argv))} exited {process.returncode}:\n{text}"
    return text


@pytest.fixture(scope="module")
async def built() -> Path:
    """The package compiled (``tsc``) into its dist/, once for the module."""
    node = shutil.which("node")
    if node is None or not TSC.exists():
        pytest.fail("Node and the TypeScript SDK's dev dependencies are missing: run `make install`")
    version = (await succeed(node, "--version")).strip()
    if int(version.lstrip("v").split(".")[0]) < 20:
        pytest.fail(f"the TypeScript SDK needs Node 20 or newer; this machine has {version}")
    await succeed(TSC, "-p", "tsconfig.json")
    return PACKAGE / "dist"


@pytest.fixture(scope="module")
async def ts_stack(engines: Engines, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    """One stack for the module. The mock takes a moment and reports progress as it goes, so a stream has
    several changes to carry (and to be cut in the middle of). The notifier reads an endpoint afresh for
    every delivery, so one sent right after a rotation is signed with the new secret too."""
    workdir = tmp_path_factory.mktemp("typescript")
    env = {
        **isolated_env(engines, workdir / "data"),
        "VIDEOGEN_MOCK_LATENCY_MS": "1500",
        "VIDEOGEN_PROGRESS_WRITE_SECONDS": "0.1",
        "VIDEOGEN_ENDPOINT_CACHE_SECONDS": "0",
    }
    async with own_stack(env, workdir / "logs") as stack:
        yield stack


def sdk_env(stack: Stack) -> dict[str, str]:
    return {"VIDEOGEN_API_KEY": stack.key, "VIDEOGEN_BASE_URL": f"{stack.base}/v1"}


async def test_the_unit_suites_pass_against_scripted_servers(built: Path) -> None:
    """Retries (one idempotency key across tries, waits equal to Retry-After, no retry of a non-idempotent
    request after a read timeout), typed errors (a missing scope's 403, a spent budget's 429: never retried),
    paging, event streams, waiting, the key sent to the API's origin only, open enums, uploads, keys, budgets,
    events, webhook verification."""
    await succeed("node", "--test", "test/unit/")


async def test_the_stack_suites_pass_and_their_videos_decode(
    built: Path, ts_stack: Stack, tmp_path: Path
) -> None:
    frame = tmp_path / "frame.png"
    await asyncio.to_thread(frame.write_bytes, solid_image(FRAME_COLOUR))
    env = {**sdk_env(ts_stack), "SDK_TEST_OUTPUT": str(tmp_path), "SDK_TEST_FRAME": str(frame)}
    # The files run side by side: each mostly waits on the stack.
    await succeed("node", "--test", "--test-concurrency=3", "test/stack/", env=env)

    fox = await asyncio.to_thread((tmp_path / "fox.mp4").read_bytes)
    assert await asyncio.to_thread(video_seconds, fox) == pytest.approx(4.0)
    first = await asyncio.to_thread((tmp_path / "frame.mp4").read_bytes)
    colour = await asyncio.to_thread(opening_colour, first)
    assert close_to(colour, FRAME_COLOUR), colour


# Each public method of the Python SDK's resources, and its TypeScript twin.
TWINS = {
    "generations.create": "generations.create",
    "generations.create_and_wait": "generations.createAndWait",
    "generations.get": "generations.get",
    "generations.list": "generations.list",  # iterated: every match
    "generations.list_page": "generations.list",  # awaited: one page
    "generations.cancel": "generations.cancel",
    "generations.delete": "generations.delete",
    "generations.wait": "generations.wait",
    "generations.download": "generations.downloadToFile",
    "generations.iter_video": "generations.download",
    "providers.list": "providers.list",
    "uploads.create": "uploads.create",
    "uploads.get": "uploads.get",
    "uploads.delete": "uploads.delete",
    "webhooks.create": "webhooks.create",
    "webhooks.list": "webhooks.list",
    "webhooks.get": "webhooks.get",
    "webhooks.update": "webhooks.update",
    "webhooks.delete": "webhooks.delete",
    "webhooks.rotate_secret": "webhooks.rotateSecret",
    "webhooks.send_test": "webhooks.sendTest",
    "webhooks.recover": "webhooks.recover",
    "webhooks.deliveries": "webhooks.deliveries",
    "webhooks.deliveries_page": "webhooks.deliveries",
    "deliveries.get": "deliveries.get",
    "deliveries.retry": "deliveries.retry",
    "usage.get": "usage.get",
    "audit_events.list": "auditEvents.list",
    "audit_events.list_page": "auditEvents.list",
    "events.list": "events.list",
    "events.list_page": "events.list",
    "events.get": "events.get",
    "api_keys.create": "apiKeys.create",
    "api_keys.list": "apiKeys.list",
    "api_keys.list_page": "apiKeys.list",
    "api_keys.get": "apiKeys.get",
    "api_keys.update": "apiKeys.update",
    "api_keys.revoke": "apiKeys.revoke",
    "budgets.get": "budgets.get",
    "budgets.set": "budgets.set",
    "batches.create": "batches.create",
    "batches.retrieve": "batches.retrieve",
    "batches.list": "batches.list",  # iterated: every batch
    "batches.list_page": "batches.list",  # awaited: one page
    "batches.generations": "batches.generations",
    "batches.generations_page": "batches.generations",
    "batches.cancel": "batches.cancel",
    "batches.wait": "batches.wait",
    "batches.results": "batches.results",
    "batches.results_lines": "batches.resultsLines",
}
TWIN_CHECK = """
import * as sdk from "./dist/index.js";
import * as webhooks from "./dist/webhooks.js";
const [methods, names] = JSON.parse(process.argv[1]);
const client = new sdk.Videogen({ apiKey: "vg_x", baseURL: "http://127.0.0.1:9/v1" });
const missing = methods.filter((path) => {
  const [resource, method] = path.split(".");
  return typeof client[resource]?.[method] !== "function";
});
missing.push(...names.filter((name) => !(name in sdk) && !(name in webhooks)));
console.log(JSON.stringify(missing));
"""


async def test_every_operation_of_the_python_sdk_has_a_typescript_twin(built: Path) -> None:
    python = AsyncClient(api_key="vg_x", base_url="http://127.0.0.1:9/v1")
    try:
        methods = {
            f"{resource}.{name}"
            for resource in (
                "generations",
                "providers",
                "uploads",
                "webhooks",
                "deliveries",
                "usage",
                "audit_events",
                "events",
                "api_keys",
                "budgets",
                "batches",
            )
            for name, _ in inspect.getmembers(type(getattr(python, resource)), inspect.isfunction)
            if not name.startswith("_")
        }
    finally:
        await python.close()
    assert methods == set(TWINS), f"Python SDK methods with no twin listed: {sorted(methods - set(TWINS))}"
    # Its error classes, and webhook verification, by the same names.
    names = [n for n in videogen_client.__all__ if n.endswith("Error")]
    names += ["verify", "unwrap", "WebhookVerificationError"]
    out = await succeed(
        "node", "--input-type=module", "-e", TWIN_CHECK, json.dumps([sorted(set(TWINS.values())), names])
    )
    assert json.loads(out) == []


async def test_the_committed_types_are_generated_from_the_served_document(
    built: Path, tmp_path: Path
) -> None:
    """The document the api serves with its default settings, through the same generator as `make ts-types`,
    gives exactly the committed src/generated/openapi.ts."""
    document = tmp_path / "openapi.json"
    await asyncio.to_thread(
        document.write_text, await succeed(sys.executable, PACKAGE / "scripts" / "openapi_document.py")
    )
    fresh = tmp_path / "openapi.ts"
    await succeed("node", "scripts/generate-types.mjs", document, fresh)
    committed = PACKAGE / "src" / "generated" / "openapi.ts"
    diff = list(
        difflib.unified_diff(
            (await asyncio.to_thread(committed.read_text)).splitlines(),
            (await asyncio.to_thread(fresh.read_text)).splitlines(),
            "committed",
            "served",
            lineterm="",
            n=1,
        )
    )
    assert not diff, "the API changed: run `make ts-types` and commit src/generated/openapi.ts\n" + "\n".join(
        diff[:60]
    )


async def test_the_types_keep_enumerations_open(built: Path) -> None:
    """test/types/ type-checks: a provider, status or event type from a newer server is a valid value; a
    number or a missing required field is not."""
    await succeed(TSC, "-p", "test/types/tsconfig.json")


async def test_the_packed_tarball_alone_makes_a_video_from_a_plain_script(
    built: Path, ts_stack: Stack, tmp_path: Path
) -> None:
    packed = json.loads(
        await succeed("npm", "pack", "--ignore-scripts", "--json", "--pack-destination", tmp_path)
    )[0]
    manifest = json.loads(await asyncio.to_thread((PACKAGE / "package.json").read_text))
    assert not manifest.get("dependencies") and not manifest.get("peerDependencies")
    assert all(entry["path"].startswith("dist/") or "/" not in entry["path"] for entry in packed["files"])

    # An empty folder: the tarball installed with nothing else (no registry needed: it depends on nothing).
    app = tmp_path / "app"
    app.mkdir()
    await succeed(
        "npm", "install", "--offline", "--no-audit", "--no-fund", tmp_path / packed["filename"], cwd=app
    )
    installed = sorted(p.name for p in (app / "node_modules").iterdir() if not p.name.startswith("."))
    assert installed == ["@videogen"], installed
    script = app / "make-video.mjs"
    await asyncio.to_thread(shutil.copy, PACKAGE / "test" / "consumer" / "make-video.mjs", script)

    out = await succeed("node", script, cwd=app, env=sdk_env(ts_stack))
    status, written = out.split()[-2:]
    assert status == "completed"
    data = await asyncio.to_thread((app / "fox.mp4").read_bytes)
    assert int(written) == len(data) > 0
    assert await asyncio.to_thread(video_seconds, data) == pytest.approx(3.0)

    # The same script, as it is, type-checks under tsc --strict against the installed package's types (its
    # declarations checked too), with no @types/node: the SDK's types need nothing of Node.
    await succeed(
        TSC,
        "--strict",
        "--noEmit",
        "--allowJs",
        "--checkJs",
        "--target",
        "es2022",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        script,
        cwd=app,
    )


PAGE = '<!doctype html><meta charset="utf-8"><title>sdk</title><script type="module" src="scenario.mjs">'
PAGE += "</script>"


@contextlib.asynccontextmanager
async def site(api: str) -> AsyncIterator[str]:
    """A web app's origin on 127.0.0.1: a page, the built package under /sdk/, and /v1/ forwarded to ``api``
    as it streams (the API sends no CORS headers, so a browser reaches it through its own origin)."""
    upstream = aiohttp.ClientSession(auto_decompress=False)

    async def forward(request: web.Request) -> web.StreamResponse:
        headers = CIMultiDict((k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP)
        body = await request.read()
        async with upstream.request(
            request.method, f"{api}{request.rel_url}", headers=headers, data=body or None
        ) as answer:
            response = web.StreamResponse(
                status=answer.status,
                headers=CIMultiDict((k, v) for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP),
            )
            await response.prepare(request)
            async for chunk in answer.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    async def page(_: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def scenario(_: web.Request) -> web.FileResponse:
        return web.FileResponse(PACKAGE / "test" / "browser" / "scenario.mjs")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/scenario.mjs", scenario)
    app.router.add_static("/sdk/", PACKAGE / "dist")
    app.router.add_route("*", "/v1/{tail:.*}", forward)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
        await upstream.close()


async def test_the_sdk_runs_unchanged_in_a_browser(built: Path, ts_stack: Stack) -> None:
    """The built package, as ES modules with no bundler, in headless Chromium against the real stack: a
    video made and waited for over the browser's fetch and event stream, a listing walked, a typed error,
    and a webhook verified (a tampered one refused) on the browser's Web Crypto."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make install` installs Debian's chromium package")
    async with site(ts_stack.base) as origin, async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(f"{origin}/?key={ts_stack.key}")
            result = await page.evaluate("window.result")
        finally:
            await browser.close()
    assert errors == []
    assert result == {
        "status": "completed",
        "told": result["told"],
        "listed": True,
        "missing": 404,
        "verified": "video.completed",
        "refused": "WebhookVerificationError",
    }, result
    assert result["told"][-1] == "completed"
