"""videogen_orchestrator.providers.mock.MockProvider."""

from __future__ import annotations

import pytest

from videogen_orchestrator.providers import mock
from videogen_orchestrator.providers.base import Job, TaskStatus
from videogen_orchestrator.providers.mock import MockProvider
from videogen_orchestrator.render import Rendered, Scene


def _job(prompt: str = "a cat", generation_id: str = "gen_01") -> Job:
    return Job(generation_id=generation_id, prompt=prompt, duration=3)


def _never() -> float:
    raise AssertionError("the rng must not be consulted")


@pytest.fixture
def fake_render(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Replace the (slow, real) renderer; record what it was asked for."""
    calls: list[tuple[str, int]] = []

    def _render(scene: Scene) -> Rendered:
        calls.append((scene.prompt, scene.duration_s))
        return Rendered(video=b"video-bytes", thumbnail=b"\xff\xd8thumb")

    monkeypatch.setattr(mock, "render", _render)
    return calls


async def test_submit_records_the_generation_id() -> None:
    provider = MockProvider()
    assert provider.name == "mock"
    assert await provider.submit(_job(generation_id="gen_01")) == "mock_gen_01"
    assert await provider.submit(_job(generation_id="gen_02")) == "mock_gen_02"
    assert provider.submitted == ["gen_01", "gen_02"]


@pytest.mark.parametrize("prompt", ["#fail", "a cat #fail", "#failure of a cat"])
async def test_fail_marker(prompt: str, fake_render: list[tuple[str, int]]) -> None:
    state = await MockProvider(rng=_never).poll("mock_gen_01", _job(prompt))
    assert state.status is TaskStatus.FAILED
    assert state.output is None
    assert state.error is not None
    assert state.error.code == "mock_failure"
    assert state.error.to_doc()["code"] == "mock_failure"
    assert state.error.retriable is False
    assert fake_render == []


async def test_failure_rate_one_fails(fake_render: list[tuple[str, int]]) -> None:
    state = await MockProvider(failure_rate=1.0, rng=lambda: 0.999).poll("mock_gen_01", _job())
    assert state.status is TaskStatus.FAILED
    assert state.error is not None
    assert state.error.code == "mock_failure"
    assert fake_render == []


@pytest.mark.parametrize(("draw", "status"), [(0.49, TaskStatus.FAILED), (0.5, TaskStatus.SUCCEEDED)])
async def test_failure_rate_uses_the_rng(
    draw: float, status: TaskStatus, fake_render: list[tuple[str, int]]
) -> None:
    state = await MockProvider(failure_rate=0.5, rng=lambda: draw).poll("mock_gen_01", _job())
    assert state.status is status


async def test_success_returns_the_rendered_output(fake_render: list[tuple[str, int]]) -> None:
    state = await MockProvider(rng=_never).poll("mock_gen_01", Job("gen_01", "a dog", 7))
    assert state.status is TaskStatus.SUCCEEDED
    assert state.error is None
    assert state.output is not None
    assert state.output.video == b"video-bytes"
    assert state.output.thumbnail == b"\xff\xd8thumb"
    assert fake_render == [("a dog", 7)]


async def test_success_with_the_real_renderer() -> None:
    state = await MockProvider().poll("mock_gen_01", _job())
    assert state.status is TaskStatus.SUCCEEDED
    assert state.output is not None and state.output.video is not None
    assert state.output.video[4:8] == b"ftyp"
    assert len(state.output.video) > 1000
    assert state.output.thumbnail is not None
    assert state.output.thumbnail.startswith(b"\xff\xd8")
