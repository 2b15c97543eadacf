"""The mock provider's render cache, and its latency and failure rate as the orchestrator builds it from
VIDEOGEN_MOCK_LATENCY_MS / VIDEOGEN_MOCK_FAILURE_RATE."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.support.env import settings_for
from videogen_orchestrator.providers.base import Job, TaskStatus
from videogen_orchestrator.providers.mock import MockProvider, RenderCache
from videogen_orchestrator.providers.registry import build_providers
from videogen_orchestrator.render import Rendered, Scene
from videogen_orchestrator.settings import OrchestratorSettings


class CountingRenderer:
    """Stands in for the (slow) real renderer; ``gate`` holds renders until the test opens it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, scene: Scene) -> Rendered:
        self.calls.append((scene.prompt, scene.duration_s))
        self.gate.wait(5)
        return Rendered(video=f"{scene.prompt}/{scene.duration_s}".encode(), thumbnail=b"\xff\xd8")


async def test_a_repeated_video_is_rendered_once() -> None:
    renderer = CountingRenderer()
    cache = RenderCache(4, renderer)

    first = await cache.get(Scene("a fox", 5))
    again = await cache.get(Scene("a fox", 5))

    assert again is first
    assert renderer.calls == [("a fox", 5)]
    assert (cache.renders, cache.hits) == (1, 1)


async def test_the_prompt_and_the_duration_both_key_the_cache() -> None:
    renderer = CountingRenderer()
    cache = RenderCache(4, renderer)

    videos = {(await cache.get(Scene(p, d))).video for p, d in [("a fox", 5), ("a fox", 6), ("a cat", 5)]}

    assert videos == {b"a fox/5", b"a fox/6", b"a cat/5"}
    assert len(renderer.calls) == 3


async def test_the_least_recently_used_render_is_dropped_beyond_the_bound() -> None:
    renderer = CountingRenderer()
    cache = RenderCache(2, renderer)
    await cache.get(Scene("a", 3))
    await cache.get(Scene("b", 3))
    await cache.get(Scene("a", 3))  # "a" is now the most recent
    await cache.get(Scene("c", 3))  # evicts "b"

    assert len(cache) == 2
    await cache.get(Scene("a", 3))
    assert renderer.calls == [("a", 3), ("b", 3), ("c", 3)]
    await cache.get(Scene("b", 3))
    assert renderer.calls[-1] == ("b", 3)


async def test_concurrent_requests_for_one_video_share_one_render() -> None:
    renderer = CountingRenderer()
    renderer.gate.clear()
    cache = RenderCache(4, renderer)

    waiters = [asyncio.create_task(cache.get(Scene("a fox", 5))) for _ in range(5)]
    await asyncio.sleep(0)
    renderer.gate.set()
    results = await asyncio.gather(*waiters)

    assert renderer.calls == [("a fox", 5)]
    assert all(r is results[0] for r in results)


async def test_a_waiter_giving_up_does_not_cancel_the_shared_render() -> None:
    renderer = CountingRenderer()
    renderer.gate.clear()
    cache = RenderCache(4, renderer)

    quitter = asyncio.create_task(cache.get(Scene("a fox", 5)))
    stayer = asyncio.create_task(cache.get(Scene("a fox", 5)))
    await asyncio.sleep(0)
    quitter.cancel()
    renderer.gate.set()

    assert (await stayer).video == b"a fox/5"
    assert quitter.cancelled()
    assert len(renderer.calls) == 1


async def test_a_cache_of_zero_entries_renders_every_time() -> None:
    renderer = CountingRenderer()
    cache = RenderCache(0, renderer)
    await cache.get(Scene("a fox", 5))
    await cache.get(Scene("a fox", 5))
    assert len(renderer.calls) == 2
    assert len(cache) == 0


async def test_the_mock_serves_repeated_prompts_from_its_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    renderer = CountingRenderer()
    monkeypatch.setattr("videogen_orchestrator.providers.mock.render", renderer)
    provider = MockProvider()

    states = [await provider.poll(f"mock_gen_{i}", Job(f"gen_{i}", "a fox", 5)) for i in range(3)]

    assert [s.status for s in states] == [TaskStatus.SUCCEEDED] * 3
    assert renderer.calls == [("a fox", 5)]


async def test_every_poll_waits_the_configured_latency_reporting_progress_as_it_passes() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    provider = MockProvider(latency_ms=250, rng=lambda: 0.0, failure_rate=0.0, sleep=sleep)
    provider.cache = RenderCache(4, CountingRenderer())
    reported: list[int] = []
    await provider.poll("mock_gen_1", Job("gen_1", "a fox", 5, on_progress=reported.append))
    await provider.poll("mock_gen_1", Job("gen_1", "a fox #fail", 5))

    assert sum(slept) == pytest.approx(0.5) and len(slept) == 20  # each poll: the latency, in tenths
    assert reported == sorted(reported) and len(reported) == 10  # rising, once per tenth
    assert reported[0] > 0 and reported[-1] < 100  # never "done" before the video is


def test_latency_failure_rate_and_cache_size_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VIDEOGEN_MOCK_LATENCY_MS", "1500")
    monkeypatch.setenv("VIDEOGEN_MOCK_FAILURE_RATE", "0.25")
    monkeypatch.setenv("VIDEOGEN_MOCK_RENDER_CACHE_ENTRIES", "3")
    settings = OrchestratorSettings()

    provider = build_providers(settings)["mock"]

    assert isinstance(provider, MockProvider)
    assert provider.latency_seconds == 1.5
    assert provider.failure_rate == 0.25


async def test_the_built_mock_fails_at_its_configured_rate() -> None:
    settings = settings_for(OrchestratorSettings, {}, mock_failure_rate=0.25)
    provider = build_providers(settings)["mock"]
    assert isinstance(provider, MockProvider)
    provider.cache = RenderCache(4, CountingRenderer())
    draws = iter([0.1, 0.3, 0.24, 0.26])
    provider._rng = lambda: next(draws)

    states = [await provider.poll("mock_gen_1", Job("gen_1", "a fox", 3)) for _ in range(4)]

    assert [s.status for s in states] == [
        TaskStatus.FAILED,
        TaskStatus.SUCCEEDED,
        TaskStatus.FAILED,
        TaskStatus.SUCCEEDED,
    ]
