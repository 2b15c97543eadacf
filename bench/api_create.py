"""POST /v1/generate throughput and latency on this machine, with the real broker and store, beside two
ceilings measured in the same run: the store's raw insert rate and a bare aiohttp JSON endpoint.

    .venv/bin/python -m bench.api_create [--requests N] [--concurrency C]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import tempfile
from pathlib import Path

import aiohttp
import orjson

from bench.common import Result, closed_loop, engines, python_process
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key
from videogen.migrate import migrate
from videogen_common.clock import SystemClock
from videogen_common.domain import Provider
from videogen_common.generations import new_generation
from videogen_common.ids import new_id
from videogen_common.settings import CommonSettings
from videogen_common.store import connect

BODY = orjson.dumps(
    {"prompt": "a red fox running through fresh snow at dawn, cinematic", "provider": "mock", "duration": 5}
)


async def http_load(name: str, url: str, headers: dict[str, str], total: int, concurrency: int) -> Result:
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def op() -> None:
            async with session.post(url, data=BODY, headers=headers) as response:
                await response.read()
                if response.status != 202:
                    raise RuntimeError(f"{name}: HTTP {response.status}")

        await closed_loop(f"{name} (warm-up)", op, total=min(200, total), concurrency=concurrency)
        return await closed_loop(name, op, total=total, concurrency=concurrency)


async def run(total: int, concurrency: int) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls:
            settings = CommonSettings(
                kafka_bootstrap=urls.kafka, mongo_url=urls.mongo, data_dir=workdir / "data", mongo_db="bench"
            )
            await migrate(settings)
            client, store = connect(urls.mongo, "bench", app_name="bench")
            key = await create_key(store, "bench")
            clock = SystemClock()

            async def insert() -> None:
                now = clock.now()
                await store.db["raw_inserts"].insert_one(
                    new_generation(
                        generation_id=new_id("gen", now),
                        account_id="bench",
                        prompt="x" * 56,
                        provider=Provider.MOCK,
                        duration=5,
                        now=now,
                    )
                )

            results = [
                await closed_loop("store: raw insert_one", insert, total=total, concurrency=concurrency)
            ]

            bare_port = free_port()
            async with python_process(["-m", "bench.bare_app", str(bare_port)], {}, workdir / "bare.log"):
                await wait_for_http(f"http://127.0.0.1:{bare_port}/healthz")
                results.append(
                    await http_load(
                        "aiohttp: bare JSON endpoint",
                        f"http://127.0.0.1:{bare_port}/v1/generate",
                        {"Content-Type": "application/json"},
                        total,
                        concurrency,
                    )
                )

            api_port = free_port()
            env = {
                "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
                "VIDEOGEN_MONGO_URL": urls.mongo,
                "VIDEOGEN_MONGO_DB": "bench",
                "VIDEOGEN_API_PORT": str(api_port),
                "VIDEOGEN_DATA_DIR": str(workdir / "data"),
                "VIDEOGEN_LOG_LEVEL": "WARNING",
            }
            async with python_process(["-m", "videogen_api.main"], env, workdir / "api.log"):
                await wait_for_http(f"http://127.0.0.1:{api_port}/healthz")
                headers = {
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {key}",
                    "X-Request-Id": "bench-" + secrets.token_hex(4),
                }
                results.append(
                    await http_load(
                        "videogen: POST /v1/generate",
                        f"http://127.0.0.1:{api_port}/v1/generate",
                        headers,
                        total,
                        concurrency,
                    )
                )
            await client.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    results = asyncio.run(run(args.requests, args.concurrency))
    for result in results:
        print(result.line())
    insert, bare, create = results
    ceiling = min(insert.rate, bare.rate)
    print(f"\ncreate / store insert ceiling = {create.rate / insert.rate:.2f}")
    print(f"create / bare aiohttp ceiling = {create.rate / bare.rate:.2f}")
    print(f"create / slower ceiling       = {create.rate / ceiling:.2f}  (target >= 0.80)")


if __name__ == "__main__":
    main()
