"""The fake of Luma's API the tests use (``tests/support/fake_providers/luma.py``), as a process of its own
for benchmarks, so its CPU is not counted as the orchestrator's. It prints its base URL and API key on one
line (JSON), then serves until stopped; ``GET /stats`` answers what it counted.

    .venv/bin/python -m bench.fake_provider --task-seconds 2 --max-running 8
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import orjson
from aiohttp import web

from tests.support.fake_providers.luma import FakeLuma


class StatsLuma(FakeLuma):
    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        app.router.add_get("/stats", self._stats)

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "submissions": len(self.submissions),
                "capacity_refusals": self.capacity_refusals,
                "peak_running": self.peak_running,
                "running": self.running_now(),
                "requests": len(self.requests),
            }
        )


async def serve(task_seconds: float, max_running: int | None) -> None:
    async with StatsLuma(task_seconds=task_seconds) as fake:
        fake.max_running = max_running
        fake.serve_thumbnail = True  # the orchestrator copies it rather than decoding a frame
        line = orjson.dumps({"base_url": fake.base_url, "origin": fake.origin, "api_key": fake.api_key})
        sys.stdout.write(line.decode() + "\n")
        sys.stdout.flush()
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task-seconds", type=float, default=2.0)
    parser.add_argument("--max-running", type=int, default=None)
    args = parser.parse_args()
    asyncio.run(serve(args.task_seconds, args.max_running))


if __name__ == "__main__":
    main()
