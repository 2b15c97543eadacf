from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import api_client
from tests.support.engines import EngineProcess
from tests.support.env import settings_for
from videogen.engines import free_port, secantus_spec
from videogen.keys import create_key
from videogen_api.settings import ApiSettings
from videogen_common.store import Store
from videogen_common.topics import Topics


@pytest.fixture
def api_settings(base_env: dict[str, str]) -> ApiSettings:
    return settings_for(ApiSettings, base_env, api_port=0)


@pytest.fixture
async def client(
    api_settings: ApiSettings, store: Store, topics: Topics
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    async with api_client(api_settings) as client:
        yield client


@pytest.fixture
async def key(store: Store) -> str:
    return await create_key(store, "acme")


@pytest.fixture
async def other_key(store: Store) -> str:
    return await create_key(store, "globex")


@pytest.fixture
def own_store(tmp_path: Path) -> Iterator[EngineProcess]:
    """A store process of the test's own, which it may kill and restart: never the session's."""
    process = EngineProcess(secantus_spec(free_port(), tmp_path / "store"), tmp_path / "store.log")
    process.start()
    try:
        yield process
    finally:
        process.stop()
