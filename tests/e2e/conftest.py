from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support.pipeline import Receiver


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    receiver = Receiver()
    await receiver.start()
    try:
        yield receiver
    finally:
        await receiver.stop()
