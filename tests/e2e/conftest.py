from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.engines import Engines
from tests.support.partition import Link, link_to, partitioned_broker, port_of
from tests.support.pipeline import Receiver


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    receiver = Receiver()
    await receiver.start()
    try:
        yield receiver
    finally:
        await receiver.stop()


@pytest.fixture
async def store_link(engines: Engines) -> AsyncIterator[Link]:
    """A link to the session's store, for the processes a test points at it (``through(store_link, url)``)."""
    if engines.kind != "embedded":
        pytest.skip("the partition tests run against the embedded engines on 127.0.0.1")
    async with link_to(port_of(engines.mongo_url), name="store") as link:
        yield link


@pytest.fixture
async def broker_link(tmp_path: Path) -> AsyncIterator[Link]:
    """A broker of the test's own whose clients all reach it through this link (it advertises the link)."""
    async with partitioned_broker(tmp_path / "broker") as link:
        yield link
