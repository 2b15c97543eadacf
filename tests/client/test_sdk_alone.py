"""The SDK installed on its own: a fresh virtual environment holding only ``clients/python`` (and what it
depends on) has nothing of the server, and a tenant's script run with it makes a video against the real
stack."""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path

import av
import pytest

from tests.support.stack import Stack

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
UV = Path(sys.executable).parent / "uv"
SERVER_LIBRARIES = ("aiohttp", "pymongo", "faust", "aiokafka", "av", "orjson", "videogen_common", "videogen")

SCRIPT = """
import importlib.util, sys
from videogen_client import Client

present = [name for name in sys.argv[2:] if importlib.util.find_spec(name) is not None]
assert not present, f"server libraries in the SDK's environment: {present}"
with Client() as client:
    video = client.generations.create_and_wait(prompt="a fox", provider="mock", duration=3, timeout=120)
    written = client.generations.download(video.id, sys.argv[1])
    other = client.generations.create(prompt="a second fox", provider="mock", duration=3)
    walked = [g.id for g in client.generations.list(page_size=1)]  # a page a generation
    assert walked == [other.id, video.id], walked
    streamed = b"".join(client.generations.iter_video(video.id))
    assert len(streamed) == written
    print(video.status, written)
"""


async def run(*argv: str | Path, env: dict[str, str] | None = None) -> str:
    process = await asyncio.create_subprocess_exec(
        *map(str, argv), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(process.communicate(), 300)
    assert process.returncode == 0, out.decode()
    return out.decode()


@pytest.fixture
async def sdk_python(tmp_path: Path) -> Path:
    """A fresh virtual environment with only the SDK installed, from the packages this machine's install
    already fetched (offline), else from the package index as ``make install`` does."""
    venv = tmp_path / "sdk-venv"
    await run(UV, "venv", "--quiet", "--python", sys.executable, venv)
    python = venv / "bin" / "python"
    try:
        await run(
            UV, "pip", "install", "--quiet", "--offline", "--python", python, ROOT / "clients" / "python"
        )
    except AssertionError:
        await run(UV, "pip", "install", "--quiet", "--python", python, ROOT / "clients" / "python")
    return python


async def test_the_sdk_alone_makes_and_downloads_a_video_with_nothing_of_the_server(
    stack: Stack, sdk_python: Path, tmp_path: Path
) -> None:
    path = tmp_path / "fox.mp4"
    env = {"VIDEOGEN_API_KEY": stack.key, "VIDEOGEN_BASE_URL": f"{stack.base}/v1", "PATH": "/usr/bin:/bin"}
    out = await run(sdk_python, "-c", SCRIPT, path, *SERVER_LIBRARIES, env=env)
    status, written = out.split()[-2:]
    assert status == "completed"
    data = await asyncio.to_thread(path.read_bytes)
    assert int(written) == len(data) > 0
    with av.open(io.BytesIO(data)) as container:
        assert isinstance(container, av.container.InputContainer)
        assert next(container.decode(video=0)) is not None
