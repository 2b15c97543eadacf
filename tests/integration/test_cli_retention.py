"""`videogen retention`, the operator's command for an account's media retention, run as an operator runs it
(the installed ``videogen`` command in its own process, the store named by VIDEOGEN_MONGO_URL) against the
real store: ``show`` prints the deployment's days until one is set, ``set`` brings the account's stored
media forward and says how many, a longer retention than the deployment's is refused with nothing written,
``clear`` goes back, and each change is in the account's audit trail as made by an operator."""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import timedelta
from pathlib import Path

from videogen_common.clock import SystemClock
from videogen_common.store import Store

DAY = timedelta(days=1)


async def videogen(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """``videogen *args`` with the test's store in its environment: exit code, stdout, stderr."""
    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "videogen"),
        *args,
        env={**os.environ, **env, "VIDEOGEN_MEDIA_RETENTION_DAYS": "30"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode().strip(), err.decode().strip()


async def test_an_operator_sets_shows_and_clears_an_accounts_retention(
    store: Store, base_env: dict[str, str]
) -> None:
    finished = SystemClock().now().replace(microsecond=0)
    await store.generations.insert_many(
        [
            # Stored media due in the deployment's 30 days, acme's and another account's.
            {
                "_id": "gen_acme",
                "account_id": "acme",
                "updated_at": finished,
                "media_due_at": finished + 30 * DAY,
            },
            {
                "_id": "gen_other",
                "account_id": "other",
                "updated_at": finished,
                "media_due_at": finished + 30 * DAY,
            },
        ]
    )

    assert await videogen(base_env, "retention", "show", "--account", "acme") == (
        0,
        "30 days (the deployment's)",
        "",
    )
    assert await videogen(base_env, "retention", "set", "--account", "acme", "--days", "3") == (
        0,
        "acme: media kept 3 days; 1 generations due sooner",
        "",
    )
    assert (await store.generations.find_one({"_id": "gen_acme"}) or {})["media_due_at"] == finished + 3 * DAY
    assert (await store.generations.find_one({"_id": "gen_other"}) or {})[
        "media_due_at"
    ] == finished + 30 * DAY
    assert await videogen(base_env, "retention", "show", "--account", "acme") == (0, "3 days", "")

    # Retention only ever shortens: longer than the deployment's is refused, and nothing changes.
    code, out, err = await videogen(base_env, "retention", "set", "--account", "acme", "--days", "31")
    assert (code, out) == (2, "")
    assert "days must be between 1 and 30" in err
    assert await videogen(base_env, "retention", "show", "--account", "acme") == (0, "3 days", "")

    assert await videogen(base_env, "retention", "clear", "--account", "acme") == (
        0,
        "acme: media kept 30 days; 0 generations due sooner",
        "",
    )
    assert await videogen(base_env, "retention", "show", "--account", "acme") == (
        0,
        "30 days (the deployment's)",
        "",
    )
    # What was brought forward stays due sooner.
    assert (await store.generations.find_one({"_id": "gen_acme"}) or {})["media_due_at"] == finished + 3 * DAY

    trail = await store.audit_events.find({"account_id": "acme"}).sort("_id", 1).to_list(None)
    assert [(e["type"], e["actor"]["type"], e["data"]) for e in trail] == [
        ("retention.updated", "operator", {"media_retention_days": 3, "brought_forward": 1}),
        ("retention.updated", "operator", {"media_retention_days": None, "brought_forward": 0}),
    ]


async def test_with_no_store_answering_it_says_where_it_looked(base_env: dict[str, str]) -> None:
    closed = {**base_env, "VIDEOGEN_MONGO_URL": "mongodb://127.0.0.1:1/"}
    code, out, err = await videogen(closed, "retention", "show", "--account", "acme")
    assert (code, out) == (1, "")
    assert "no store answers at mongodb://127.0.0.1:1" in err
