"""Session fixtures: real engines, started once. Per-test isolation comes from a fresh database name and a
fresh topic prefix (so a fresh consumer group) for each test."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from blockbuster import BlockBuster, blockbuster_ctx

from tests.support.engines import (
    EngineProcess,
    Engines,
    container_engines,
    docker_available,
    embedded_engines,
)
from tests.support.env import isolated_env, settings_for
from tests.support.s3 import endpoint_url, new_bucket, s3_media_env, s3_server
from tests.support.scheduling import ByUnit, heaviest_units_first
from videogen_common.repositories.indexes import ensure_indexes
from videogen_common.settings import CommonSettings
from videogen_common.store import Store, connect
from videogen_common.topics import Topics, ensure_topics


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a worker of a parallel run (`make test`), the heaviest units of work first: the order they go out
    in (``tests.support.scheduling``)."""
    if hasattr(config, "workerinput"):
        heaviest_units_first(items)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> ByUnit | None:
    """``-n N`` (``--dist load``, the default) and ``--dist loadscope`` send whole modules, all container
    tests as one unit, heaviest first: never one module's fixtures, or two Docker sessions, on two workers."""
    return ByUnit(config, log) if config.getvalue("dist") in ("load", "loadscope") else None


@pytest.fixture(autouse=True)
def blockbuster() -> Iterator[BlockBuster]:
    """Any blocking call (file, socket, sleep…) made on the event loop by our code fails the test."""
    with blockbuster_ctx(
        [
            "videogen_common",
            "videogen_api",
            "videogen_orchestrator",
            "videogen_notifier",
            "videogen",
            "videogen_client",
        ]
    ) as guard:
        # Known one-off calls at client construction, not on a request path: PyMongo looks for /.dockerenv.
        guard.functions["os.stat"].can_block_in("pymongo/pool_options.py", "get_container_env_info")
        yield guard


@pytest.fixture(scope="session")
def engine_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("engines")


@pytest.fixture(scope="session")
def _engines(engine_workdir: Path) -> Iterator[tuple[Engines, EngineProcess | None]]:
    if os.environ.get("VIDEOGEN_TEST_ENGINES") == "containers" and docker_available():
        with container_engines() as engines:
            yield engines, None
        return
    with embedded_engines(engine_workdir) as (engines, broker):
        yield engines, broker


@pytest.fixture(scope="session")
def engines(_engines: tuple[Engines, EngineProcess | None]) -> Engines:
    return _engines[0]


@pytest.fixture(scope="session")
def broker_process(_engines: tuple[Engines, EngineProcess | None]) -> EngineProcess:
    if _engines[1] is None:
        pytest.skip("needs the embedded broker (restarts it)")
    return _engines[1]


@pytest.fixture(scope="session")
def s3_endpoint(engine_workdir: Path) -> Iterator[str]:
    """A local S3 server (moto's) for the whole session, started by the first test that needs it."""
    server = s3_server(engine_workdir / "s3.log")
    try:
        server.start()
        yield endpoint_url(server)
    finally:
        server.stop()


@pytest.fixture
async def s3_env(s3_endpoint: str) -> dict[str, str]:
    """Media settings for a fresh bucket on the local S3 server: merge them into ``base_env``."""
    return s3_media_env(s3_endpoint, await new_bucket(s3_endpoint))


@pytest.fixture
def base_env(engines: Engines, tmp_path: Path) -> dict[str, str]:
    """Environment for a test's services: its own database, topic prefix, consumer groups and data dir."""
    return isolated_env(engines, tmp_path / "data")


@pytest.fixture
def common_settings(base_env: dict[str, str]) -> CommonSettings:
    return settings_for(CommonSettings, base_env)


@pytest.fixture
async def store(common_settings: CommonSettings) -> AsyncIterator[Store]:
    client, store = connect(common_settings.mongo_url, common_settings.mongo_db, app_name="tests")
    await ensure_indexes(store)
    try:
        yield store
    finally:
        await client.drop_database(common_settings.mongo_db)
        await client.close()


@pytest.fixture
async def topics(common_settings: CommonSettings) -> Topics:
    topics = Topics(common_settings.topic_prefix)
    await ensure_topics(common_settings.kafka_bootstrap, topics, common_settings.topic_partitions)
    return topics
