"""Provider callbacks through the services as processes, as a deployment runs them: the orchestrator's runtime
reads the callbacks' wake-ups (``VIDEOGEN_PROVIDER_CALLBACKS`` on) and the api, at the deployment's public
base URL, takes Luma's calls back. The safety-net poll is ten minutes: only a callback can finish the
generation within the test."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from tests.support.fake_providers.luma import FakeLuma
from tests.support.stack import generate, running_stack
from tests.support.waiting import eventually
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e

READING = "videogen_provider_callbacks_reading 1.0"


async def test_a_luma_generation_is_completed_by_its_callback_through_the_running_services(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> None:
    async with FakeLuma(task_seconds=0.3) as luma, aiohttp.ClientSession() as session:
        env = {
            "VIDEOGEN_PROVIDERS": "luma",
            "VIDEOGEN_LUMA_API_KEY": luma.api_key,
            "VIDEOGEN_LUMA_BASE_URL": luma.base_url,
            "VIDEOGEN_PROVIDER_CALLBACKS": "true",
            "VIDEOGEN_PROVIDER_CALLBACK_POLL_SECONDS": "600",
        }
        services = ("api", "orchestrator")
        async with running_stack(
            base_env, common_settings, store, tmp_path / "logs", services=services, env=env
        ) as stack:

            async def reading() -> bool:
                async with session.get(stack.url("orchestrator", "/metrics")) as answer:
                    return READING in await answer.text()

            # The orchestrator says when it reads the wake-ups (a wake-up before that would be missed).
            await eventually(reading, timeout=30, what="the orchestrator reading the providers' callbacks")
            status, created = await generate(
                session, stack.base, stack.key, "a heron at dusk", provider="luma", duration=5
            )
            assert status == 202, created
            url = f"{stack.base}/v1/generations/{created['id']}"
            headers = {"Authorization": f"Bearer {stack.key}", "Prefer": "wait=10"}
            generation = created
            for _ in range(6):  # a minute at most, far below the safety net's ten
                async with session.get(url, headers=headers) as answer:
                    assert answer.status == 200
                    generation = await answer.json()
                if generation["status"] in ("completed", "failed"):
                    break

    assert generation["status"] == "completed", generation
    [body] = luma.submissions
    assert body["callback_url"].startswith(f"{stack.base}/v1/provider-callbacks/luma/")
    # Luma called back once, was answered 200, and that callback was read: no poll of the task.
    assert [(c.phase, c.status) for c in luma.callbacks] == [("succeeded", 200)]
    reads = [path for method, path in luma.requests if method == "GET" and not path.startswith("/files/")]
    assert len(reads) == 1, luma.requests
