"""The stack the orchestrator's end-to-end tests kill, cut off and restart orchestrators in: migrations, a key
of account ``acme``, a fake of Runway's API (a real HTTP server on 127.0.0.1 that counts every task-creation
request) and the api as a process (``orchestrator_stack``); the test starts its orchestrators itself
(``Stack.orchestrator``), each a process with its own instance name (its lease owner) and side port."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from tests.support.fake_providers.runway import FakeRunway
from tests.support.pipeline import call
from tests.support.services import ServiceProcess, wait_http_ok
from tests.support.stack import running_stack
from videogen.engines import free_port
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

Doc = dict[str, Any]

TERMINAL = ("completed", "failed")


@dataclass
class Stack:
    base: str
    key: str
    env: dict[str, str]
    store: Store
    runway: FakeRunway
    logs: Path
    processes: list[ServiceProcess]

    def orchestrator(self, instance: str, **env: str) -> ServiceProcess:
        """An orchestrator process named ``instance`` (its lease owner), with its own side port."""
        process = ServiceProcess(
            "orchestrator",
            {
                **self.env,
                "VIDEOGEN_ORCHESTRATOR_INSTANCE": instance,
                "VIDEOGEN_ORCHESTRATOR_PORT": str(free_port()),
                **env,
            },
            self.logs / instance,
        )
        self.processes.append(process)
        return process

    async def ready(self, process: ServiceProcess) -> None:
        """Started, and a member of the consumer group (its /readyz waits for the join)."""
        await process.start()
        await wait_http_ok(side(process, "/readyz"), process, 60)

    async def create(self, count: int, tag: str, **body: Any) -> dict[str, str]:
        """``count`` generations through the api (on runway unless ``body`` says otherwise); prompt → id."""
        async with aiohttp.ClientSession() as session:

            async def one(i: int) -> tuple[str, str]:
                prompt = f"{tag} shot {i}"
                request = {"prompt": prompt, "provider": "runway", "duration": 5, **body}
                status, created = await call(session, "POST", f"{self.base}/v1/generate", self.key, request)
                assert status == 202, created
                return prompt, created["id"]

            return dict(await asyncio.gather(*(one(i) for i in range(count))))

    async def batch(self, items: list[Doc], key: str | None = None, **options: Any) -> Doc:
        """A batch of ``items`` through the api (POST /v1/batches, as ``key``'s account; ``acme`` by default),
        accepted; returns the batch as the api answered it."""
        async with aiohttp.ClientSession() as session:
            status, accepted = await call(
                session, "POST", f"{self.base}/v1/batches", key or self.key, {"items": items, **options}
            )
        assert status == 202, accepted
        assert isinstance(accepted, dict)
        return accepted

    async def read_batch(self, batch_id: str) -> Doc:
        """The batch as the api shows it (GET /v1/batches/{id})."""
        async with aiohttp.ClientSession() as session:
            status, found = await call(session, "GET", f"{self.base}/v1/batches/{batch_id}", self.key)
        assert status == 200, found
        assert isinstance(found, dict)
        return found

    async def items_of(self, batch_id: str) -> list[Doc]:
        """The batch's generations, in the order given."""
        return await self.store.generations.find({"batch_id": batch_id}).sort("_id", 1).to_list(None)

    async def docs(self, ids: list[str]) -> list[Doc]:
        return await self.store.generations.find({"_id": {"$in": ids}}).to_list(None)

    async def by_id(self, ids: list[str]) -> dict[str, Doc]:
        return {d["_id"]: d for d in await self.docs(ids)}

    async def all_terminal(self, ids: list[str]) -> bool:
        return all(d["status"] in TERMINAL for d in await self.docs(ids))

    async def assert_each_submitted_at_most_once_and_finished(self, created: dict[str, str]) -> list[Doc]:
        """Every generation terminal; completed ones were submitted exactly once (and finished from the task
        that submission made); failed ones only because a kill cut their submit, and never submitted twice."""
        docs = await self.by_id(list(created.values()))
        tasks_by_prompt = {self.runway.prompt_of(t.body): t.id for t in self.runway.tasks.values()}
        for prompt, generation_id in created.items():
            doc = docs[generation_id]
            submissions = self.runway.submissions_for(prompt)
            assert submissions <= 1, f"{generation_id} was submitted {submissions} times"
            if doc["status"] == "completed":
                assert submissions == 1
                assert doc["provider_task_id"] == tasks_by_prompt[prompt]
            else:
                assert doc["status"] == "failed", doc
                assert doc["error"]["code"] == "provider_unavailable", doc["error"]
                assert doc.get("submit_started_at") is not None and doc.get("provider_task_id") is None
        return list(docs.values())


def side(process: ServiceProcess, path: str) -> str:
    """A URL on the orchestrator process's side port (probes, metrics)."""
    return f"http://127.0.0.1:{process.env['VIDEOGEN_ORCHESTRATOR_PORT']}{path}"


def run_for(runway: FakeRunway, seconds: float) -> None:
    """The provider's tasks, those made and those to come, end ``seconds`` after their creation."""
    runway.task_seconds = seconds
    for task in runway.tasks.values():
        task.run_seconds = seconds


@asynccontextmanager
async def orchestrator_stack(
    base_env: Mapping[str, str],
    common_settings: CommonSettings,
    store: Store,
    tmp_path: Path,
    *,
    task_seconds: float,
    lease_seconds: float,
    shutdown_timeout_seconds: float = 5.0,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[Stack]:
    """Migrations, a key, a fake Runway whose tasks run ``task_seconds`` and the api as a process (killed at
    the end), every service given ``env`` over these settings; every orchestrator the test started is killed
    at the end too."""
    async with FakeRunway(task_seconds=task_seconds) as runway:
        service_env = {
            "VIDEOGEN_PROVIDERS": "mock,runway",
            "VIDEOGEN_RUNWAY_API_KEY": runway.api_key,
            "VIDEOGEN_RUNWAY_BASE_URL": runway.base_url,
            "VIDEOGEN_LEASE_SECONDS": str(lease_seconds),
            "VIDEOGEN_RECONCILE_INTERVAL_SECONDS": "0.5",
            "VIDEOGEN_DISPATCH_GRACE_SECONDS": "2",
            "VIDEOGEN_POLL_INTERVAL_SECONDS": "0.2",
            "VIDEOGEN_SHUTDOWN_TIMEOUT_SECONDS": f"{shutdown_timeout_seconds:g}",
            "VIDEOGEN_ACCOUNT_MAX_IN_FLIGHT": "64",
            "VIDEOGEN_LOG_LEVEL": "INFO",
            **(env or {}),
        }
        logs = tmp_path / "logs"
        async with running_stack(
            base_env,
            common_settings,
            store,
            logs / "api",
            services=["api"],
            env=service_env,
            stop_signal=signal.SIGKILL,
            clean_exit=False,
        ) as api:
            stack = Stack(api.base, api.key, api.env, store, runway, logs, [])
            try:
                yield stack
            finally:
                for process in stack.processes:
                    await process.stop(signal.SIGKILL)
