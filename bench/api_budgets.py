"""What budgets cost POST /v1/generate: the same api process creating for an account without budgets (the
baseline), an account with a daily and a monthly budget of seconds, one with cost budgets beside them, and a
key with budgets of its own in such an account — each limit far above what the run sends, so every request
does all the work (the reservation's conditional update per owner, the threshold read after the insert) and
none is refused.

    .venv/bin/python -m bench.api_budgets [--requests N] [--concurrency C] [--rounds R] [--before DIR]

``--before DIR``: also run an api from the source tree at DIR (e.g. ``git archive`` of the commit before
budgets and scopes, unpacked) against the same store and broker, and time creation there beside this code's
unbudgeted creation: what checking scopes and looking up budgets cost an account that has none.

Phases alternate within each round, every process staying up, so each round's ratios compare figures taken
moments apart; the medians over rounds are reported."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
from pathlib import Path

import aiohttp

from bench.api_create import Phase, poster, timed
from bench.common import engines, migrated_store, python_process
from videogen.engines import free_port, wait_for_http
from videogen.keys import create_key
from videogen_common.budgets import Limits
from videogen_common.clock import SystemClock
from videogen_common.repositories.budgets import BudgetRepository
from videogen_common.store import Store

FREE, ACCOUNT, COST, KEY, BEFORE = (
    "no budgets (baseline)",
    "account budgets",
    "account budgets, cost too",
    "account + key budgets",
    "before: the code without scopes or budgets",
)
HUGE = Limits({"daily_video_seconds": 10**8, "monthly_video_seconds": 10**9})
# The four budgets (cost in micro-dollars: a billion and ten billion dollars).
HUGE_WITH_COST = Limits({**HUGE.values, "daily_cost": 10**15, "monthly_cost": 10**16})


async def _keys(store: Store) -> dict[str, str]:
    """An API key per phase: its account's (and for KEY, the key's own) budgets set."""
    now = SystemClock().now()
    keys = {FREE: await create_key(store, "free"), ACCOUNT: await create_key(store, "capped")}
    await BudgetRepository(store).set_limits("capped", HUGE, now)
    keys[COST] = await create_key(store, "capped-cost")
    await BudgetRepository(store).set_limits("capped-cost", HUGE_WITH_COST, now)
    keys[KEY] = await create_key(store, "capped-key")
    await BudgetRepository(store).set_limits("capped-key", HUGE, now)
    await store.api_keys.update_one({"account_id": "capped-key"}, {"$set": {"budgets": HUGE.to_doc()}})
    keys[BEFORE] = await create_key(store, "before")
    return keys


async def run(total: int, concurrency: int, rounds: int, before: Path | None) -> list[dict[str, Phase]]:
    with tempfile.TemporaryDirectory(prefix="vg-bench-") as tmp:
        workdir = Path(tmp)
        async with engines(workdir) as urls, contextlib.AsyncExitStack() as stack:
            client, store = await migrated_store(urls, workdir, "bench")
            keys = await _keys(store)
            await client.close()
            session = await stack.enter_async_context(
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))
            )
            trees = {"now": None, **({"before": before} if before else {})}
            ports: dict[str, int] = {}
            pids: dict[str, int] = {}
            for name, tree in trees.items():
                ports[name] = free_port()
                env = {
                    "VIDEOGEN_KAFKA_BOOTSTRAP": urls.kafka,
                    "VIDEOGEN_MONGO_URL": urls.mongo,
                    "VIDEOGEN_MONGO_DB": "bench",
                    "VIDEOGEN_API_PORT": str(ports[name]),
                    "VIDEOGEN_DATA_DIR": str(workdir / "data"),
                    "VIDEOGEN_LOG_LEVEL": "WARNING",
                    "VIDEOGEN_RATE_LIMIT_GENERATE_QUOTA": str(1_000_000),
                }
                if tree is not None:
                    env["PYTHONPATH"] = f"{tree}/services/api/src:{tree}/libs/common/src"
                proc = await stack.enter_async_context(
                    python_process(["-m", "videogen_api.main"], env, workdir / f"api-{name}.log")
                )
                pids[name] = proc.pid
                await wait_for_http(f"http://127.0.0.1:{ports[name]}/healthz")

            ops = {
                phase: (
                    poster(
                        session,
                        phase,
                        f"http://127.0.0.1:{ports['before' if phase == BEFORE else 'now']}/v1/generate",
                        {"Content-Type": "application/json", "Authorization": f"Bearer {keys[phase]}"},
                    ),
                    pids["before" if phase == BEFORE else "now"],
                )
                for phase in (FREE, ACCOUNT, COST, KEY, *((BEFORE,) if before else ()))
            }
            runs = []
            for n in range(rounds):
                phases = {}
                order = list(ops) if n % 2 == 0 else list(reversed(ops))
                for phase in order:
                    op, pid = ops[phase]
                    phases[phase] = await timed(
                        phase, op, total, concurrency, {"api": pid, "store": urls.store_pid}, warm_up=n == 0
                    )
                runs.append(phases)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="the source tree of the code before, to time beside")
    args = parser.parse_args()
    before = args.before.resolve() if args.before else None
    runs = asyncio.run(run(args.requests, args.concurrency, args.rounds, before))
    ratios: dict[str, list[float]] = {}
    for n, phases in enumerate(runs, 1):
        print(f"round {n}")
        for phase in phases.values():
            print("  " + phase.result.line())
        for phase in phases.values():
            print("  " + phase.cpu_line())
        base = phases[FREE].result.rate
        for name, phase in phases.items():
            ratios.setdefault(name, []).append(phase.result.rate / base)
        print()
    for name, values in ratios.items():
        print(
            f"{name}: rate / baseline by round {', '.join(f'{v:.2f}' for v in values)}; "
            f"median {statistics.median(values):.2f}"
        )


if __name__ == "__main__":
    main()
