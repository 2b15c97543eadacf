"""``client.batches`` and ``vg batch`` against the real stack (api, orchestrator and notifier processes, the
real broker and store, the mock provider): a batch submitted, waited for with progress, its results read as
an iterator and as a file; ``vg batch submit --wait`` and ``vg batch results ID > out.jsonl``."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.stack import Stack
from videogen_client import AsyncClient, Client
from videogen_client.errors import ValidationError
from videogen_client.resources.batches import Batch

pytestmark = pytest.mark.e2e
VG = str(Path(sys.executable).parent / "vg")


async def test_the_sdk_creates_waits_with_progress_and_reads_results(stack: Stack) -> None:
    items = [
        {"prompt": f"a lighthouse, take {i}", "provider": "mock", "duration": 3, "custom_id": f"p{i}"}
        for i in range(4)
    ]
    items.append({"prompt": "this one #fail", "provider": "mock", "duration": 3, "custom_id": "bad"})
    seen: list[Batch] = []
    async with AsyncClient(api_key=stack.key, base_url=f"{stack.base}/v1") as client:
        with pytest.raises(ValidationError) as refused:
            await client.batches.create([{"prompt": "x", "provider": "mock", "duration": 99}])
        assert (refused.value.problem.model_extra or {})["invalid_count"] == 1
        batch = await client.batches.create(items, metadata={"run": "sdk"}, idempotency_key="sdk-run-1")
        again = await client.batches.create(items, metadata={"run": "sdk"}, idempotency_key="sdk-run-1")
        assert again.id == batch.id and batch.counts.total == 5
        done = await client.batches.wait(batch.id, on_progress=seen.append, poll_interval=0.2, timeout=120)
        assert done.status == "completed" and (done.counts.completed, done.counts.failed) == (4, 1)
        assert seen[-1] == done and all(b.counts.ended <= done.counts.ended for b in seen)
        results = [r async for r in client.batches.results(batch.id)]
        assert [r.custom_id for r in results] == ["p0", "p1", "p2", "p3", "bad"]
        assert all(r.video_url for r in results[:4]) and results[4].error is not None
        assert [b.id async for b in client.batches.list()] == [batch.id]
        failed = [g.custom_id async for g in client.batches.generations(batch.id, status=["failed"])]
        assert failed == ["bad"]

    def sync_side() -> None:
        with Client(api_key=stack.key, base_url=f"{stack.base}/v1") as sync:
            assert sync.batches.retrieve(batch.id).status == "completed"
            assert [r.custom_id for r in sync.batches.results(batch.id)][-1] == "bad"

    await asyncio.to_thread(sync_side)


async def test_vg_batch_submit_waits_with_a_progress_line_and_writes_results(
    stack: Stack, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIDEOGEN_")}
    env.update(
        VIDEOGEN_CONFIG=str(tmp_path / "vg.json"),
        VIDEOGEN_API_KEY=stack.key,
        VIDEOGEN_BASE_URL=f"{stack.base}/v1",
    )
    prompts = tmp_path / "prompts.jsonl"
    lines = [
        json.dumps({"prompt": f"a kite, take {i}", "custom_id": f"k{i}", "duration": 3}) for i in range(3)
    ]
    await asyncio.to_thread(prompts.write_text, "\n".join(lines) + "\n")

    async def vg(*args: str) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            VG, *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(process.communicate(), 180)
        assert process.returncode is not None
        return process.returncode, out.decode(), err.decode()

    code, out, err = await vg("batch", "submit", str(prompts), "--wait", "--poll", "0.2", "--json")
    assert code == 0, err
    batch = json.loads(out)
    assert batch["status"] == "completed" and batch["counts"]["completed"] == 3
    assert "[" + "#" * 30 + "] 3/3 ended: 3 completed" in err  # the progress line, at its end
    code, out, err = await vg("batch", "results", batch["id"])
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["custom_id"] for r in rows] == ["k0", "k1", "k2"] and all(
        r["status"] == "completed" for r in rows
    )
