"""The autouse blockbuster fixture really fails a test when our code blocks the event loop."""

from __future__ import annotations

from pathlib import Path

import pytest
from blockbuster import BlockingError

from videogen_common.media import LocalMediaStore


async def test_a_blocking_file_write_from_our_code_on_the_loop_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(BlockingError):
        LocalMediaStore._put(tmp_path / "gen_1" / "video.mp4", b"bytes")  # the sync helper, on the loop


async def test_the_async_path_does_not_block(tmp_path: Path) -> None:
    store = LocalMediaStore(tmp_path)
    await store.put("gen_1/video.mp4", b"bytes")
    assert await store.get("gen_1/video.mp4") == b"bytes"
