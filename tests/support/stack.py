"""The start-up the end-to-end tests share: migrations, an API key for account ``acme``, and services as
processes (``running_stack``); and a customer's first calls through the api: subscribe a webhook receiver,
request a generation."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from tests.support.env import settings_for
from tests.support.pipeline import call
from tests.support.services import ServiceProcess, wait_http_ok
from videogen.engines import free_port
from videogen.keys import create_key
from videogen.migrate import migrate
from videogen_common.repositories.indexes import ensure_indexes
from videogen_common.settings import CommonSettings
from videogen_common.store import Store, connect

ACCOUNT = "acme"
SERVICES = ("api", "orchestrator", "notifier")
WORKERS = ("orchestrator", "notifier")


@dataclass
class Stack:
    """The api at ``base`` (``key`` is an API key of ``ACCOUNT``), the environment the services were given,
    and the service processes by name; ``ports`` holds the api's port and each worker's side port."""

    base: str
    key: str
    env: dict[str, str]
    ports: dict[str, int]
    services: dict[str, ServiceProcess]

    def url(self, service: str, path: str) -> str:
        return f"http://127.0.0.1:{self.ports[service]}{path}"


@asynccontextmanager
async def running_stack(
    base_env: Mapping[str, str],
    common_settings: CommonSettings,
    store: Store,
    logs: Path,
    *,
    services: Iterable[str] = SERVICES,
    env: Mapping[str, str] | None = None,
    stop_signal: int = signal.SIGTERM,
    clean_exit: bool = True,
) -> AsyncIterator[Stack]:
    """Migrate, make a key, and start ``services`` as processes with ``env`` over ``base_env``; the api and
    each worker listen on free ports. Yields once every service answers ``/readyz`` (the api reaches the
    store; a worker has joined its consumer group). On exit each is sent ``stop_signal``; with ``clean_exit``
    every one must then exit 0."""
    await migrate(common_settings)
    key = await create_key(store, ACCOUNT)
    names = list(services)
    ports = {name: free_port() for name in names}
    api_port = ports.get("api") or free_port()
    base = f"http://127.0.0.1:{api_port}"
    service_env = {
        **base_env,
        "VIDEOGEN_API_PORT": str(api_port),
        "VIDEOGEN_PUBLIC_BASE_URL": base,
        **{f"VIDEOGEN_{name.upper()}_PORT": str(ports[name]) for name in names if name in WORKERS},
        **(env or {}),
    }
    stack = Stack(
        base,
        key,
        service_env,
        ports,
        {name: ServiceProcess(name, service_env, logs) for name in names},
    )
    try:
        for process in stack.services.values():
            await process.start()
        for name, process in stack.services.items():
            # A worker is ready once it has joined its consumer group, which may take a while.
            await wait_http_ok(stack.url(name, "/readyz"), process, timeout=30 if name == "api" else 60)
        yield stack
    finally:
        codes = await asyncio.gather(*(p.stop(stop_signal) for p in stack.services.values()))
        if clean_exit:
            assert codes == [0] * len(codes), f"services did not exit cleanly on SIGTERM: {codes}"


@asynccontextmanager
async def own_stack(env: dict[str, str], logs: Path) -> AsyncIterator[Stack]:
    """``running_stack`` for a whole module: ``env`` (an ``isolated_env`` and the module's own settings) names
    its own database, which this connects to, indexes, and drops at the end."""
    common = settings_for(CommonSettings, env)
    client, store = connect(common.mongo_url, common.mongo_db, app_name="tests")
    await ensure_indexes(store)
    try:
        async with running_stack(env, common, store, logs) as stack:
            yield stack
    finally:
        await client.drop_database(common.mongo_db)
        await client.close()


async def subscribe(
    session: aiohttp.ClientSession, base: str, key: str, url: str, events: list[str]
) -> dict[str, Any]:
    """Register ``url`` as a webhook for ``events``; returns the webhook (its ``secret`` included)."""
    status, hook = await call(session, "POST", f"{base}/v1/webhooks", key, {"url": url, "events": events})
    assert status == 201, hook
    assert isinstance(hook, dict)
    return hook


async def read_generation(
    session: aiohttp.ClientSession, base: str, key: str, generation_id: str
) -> dict[str, Any]:
    """GET the generation as the api answers it (200)."""
    status, found = await call(session, "GET", f"{base}/v1/generations/{generation_id}", key)
    assert status == 200, found
    assert isinstance(found, dict)
    return found


async def generate(
    session: aiohttp.ClientSession,
    base: str,
    key: str,
    prompt: str,
    *,
    provider: str = "mock",
    duration: int = 3,
) -> tuple[int, Any]:
    """Request a generation; returns the api's status and answer."""
    body = {"prompt": prompt, "provider": provider, "duration": duration}
    return await call(session, "POST", f"{base}/v1/generate", key, body)
