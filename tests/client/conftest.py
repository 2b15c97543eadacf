from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.stack import Stack, running_stack
from videogen_common.settings import CommonSettings
from videogen_common.store import Store


@pytest.fixture
async def stack(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> AsyncIterator[Stack]:
    """The real stack for the SDK and vg to talk to: api, orchestrator and notifier as processes, the real
    broker and store, the mock provider."""
    async with running_stack(base_env, common_settings, store, tmp_path / "logs") as stack:
        yield stack
