"""``vg`` run as a user runs it, against the real stack: through a pseudo-terminal for the live progress
display, with ``--json`` for scripts, its exit codes, ``vg login``'s private config, and ``vg listen``
receiving and verifying a real delivery."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import signal
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import av
import httpx
import pytest

from tests.support.receivers import receiving
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from videogen_client import AsyncClient
from videogen_common.settings import CommonSettings
from videogen_common.store import Store

pytestmark = pytest.mark.e2e
VG = str(Path(sys.executable).parent / "vg")


def user_env(stack: Stack, tmp_path: Path, *, with_key: bool = True) -> dict[str, str]:
    """A user's environment: no VIDEOGEN_* settings of the tests', a config file of their own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIDEOGEN_")}
    env["VIDEOGEN_CONFIG"] = str(tmp_path / "vg" / "config.json")
    if with_key:
        env.update(VIDEOGEN_API_KEY=stack.key, VIDEOGEN_BASE_URL=f"{stack.base}/v1")
    return env


async def vg(env: dict[str, str], *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        VG, *args, env=env, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def on_a_terminal(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    """Run vg with its output on a pseudo-terminal, as in a shell; everything it wrote, and its exit code."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [VG, *args], env=env, cwd=cwd, stdout=follower, stderr=follower, close_fds=True
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: vg has exited
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return process.wait(timeout=60), seen.decode(errors="replace")


def decodes(path: Path) -> bool:
    with av.open(io.BytesIO(path.read_bytes())) as container:
        assert isinstance(container, av.container.InputContainer)
        return next(container.decode(video=0)) is not None


async def test_generate_wait_download_shows_live_progress_on_a_terminal(stack: Stack, tmp_path: Path) -> None:
    env = user_env(stack, tmp_path)
    code, seen = await asyncio.to_thread(
        on_a_terminal,
        env,
        tmp_path,
        "generate",
        "a red fox in snow",
        "--provider",
        "mock",
        "--duration",
        "3",
        "--wait",
        "--download",
        "fox.mp4",
    )
    assert code == 0, seen
    assert "\r\x1b[K" in seen  # the progress line is redrawn in place
    assert "completed" in seen and "saved" in seen
    assert await asyncio.to_thread(decodes, tmp_path / "fox.mp4")


async def test_json_output_and_exit_codes(stack: Stack, tmp_path: Path) -> None:
    env = user_env(stack, tmp_path)
    code, out, err = await vg(env, "--json", "generate", "a quiet lake", "--duration", "3", "--wait")
    assert code == 0, err
    made = json.loads(out)
    assert made["status"] == "completed" and made["video_url"]
    assert "completed" in err and "\r" not in err  # plain progress lines when not on a terminal

    code, out, _ = await vg(env, "--json", "generations", "list", "--status", "completed")
    assert code == 0 and made["id"] in [g["id"] for g in json.loads(out)]
    code, out, _ = await vg(env, "generations", "list")
    assert code == 0 and out.splitlines()[0].split()[:2] == ["ID", "STATUS"] and made["id"] in out

    code, out, err = await vg(env, "--json", "generate", "a storm #fail", "--duration", "3", "--wait")
    assert code == 1 and json.loads(out)["status"] == "failed" and "failed" in err
    code, _, err = await vg(env, "generations", "get", "gen_nothing_here")
    assert code == 3 and "404" in err

    # What the account made: the two 3-second generations, one of them a video; the mock charges nothing.
    code, out, err = await vg(env, "--json", "usage")
    assert code == 0, err
    assert json.loads(out)["total"] == {"generations": 2, "seconds": 6, "video_seconds": 3, "cost": 0.0}
    yesterday = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S")  # no zone: UTC
    code, out, _ = await vg(env, "usage", "--start", yesterday)
    assert code == 0 and out.splitlines()[0].split()[:3] == ["DATE", "PROVIDER", "STATUS"]
    assert out.splitlines()[-1].startswith("2 generations, 6 s asked for, 3 s of video made")
    code, out, _ = await vg(env, "--json", "audit")  # the stack's key, made at the command line
    assert code == 0 and [(e["type"], e["actor"]["type"]) for e in json.loads(out)] == [
        ("api_key.created", "operator")
    ]
    # Deleted: read back as its tombstone, left out of the list, still in the usage.
    code, out, err = await vg(env, "--json", "generations", "delete", made["id"])
    assert code == 0 and json.loads(out) == {"deleted": made["id"]}, err
    code, out, _ = await vg(env, "--json", "generations", "get", made["id"])
    gone = json.loads(out)
    assert code == 0 and gone["deleted"] and gone["prompt"] == "" and gone["video_url"] is None
    code, out, _ = await vg(env, "--json", "generations", "list")
    assert code == 0 and made["id"] not in [g["id"] for g in json.loads(out)]
    code, out, _ = await vg(env, "--json", "usage")
    assert json.loads(out)["total"] == {"generations": 2, "seconds": 6, "video_seconds": 3, "cost": 0.0}
    code, _, err = await vg(env, "generate", "too long", "--duration", "30")
    assert code == 3 and "duration" in err
    code, _, err = await vg(user_env(stack, tmp_path, with_key=False), "generations", "list")
    assert code == 2 and "vg login" in err
    code, _, err = await vg({**env, "VIDEOGEN_BASE_URL": "http://127.0.0.1:9/v1"}, "generations", "list")
    assert code == 4


async def test_keys_are_made_listed_and_revoked_and_budgets_set_and_shown(
    stack: Stack, tmp_path: Path
) -> None:
    env = user_env(stack, tmp_path)
    code, out, err = await vg(
        env,
        "--json",
        "keys",
        "create",
        "batch job",
        "--scope",
        "generations:write",
        "--daily-video-seconds",
        "8",
    )
    assert code == 0, err
    made = json.loads(out)
    assert made["scopes"] == ["generations:write"] and made["budgets"]["daily_video_seconds"] == 8
    assert made["secret"].endswith(made["last_four"]) and "shown this once" in err
    batch = {**env, "VIDEOGEN_API_KEY": made["secret"]}
    code, out, _ = await vg(batch, "--json", "generate", "a kite", "--duration", "5")
    assert code == 0 and json.loads(out)["status"] == "processing"
    code, _, err = await vg(batch, "generate", "another kite", "--duration", "5")
    assert code == 3 and "budget" in err.lower() and "3 left" in err  # its own daily budget, not retried
    code, _, err = await vg(batch, "budgets")
    assert code == 3 and "usage:read" in err  # beyond its scopes

    code, out, _ = await vg(env, "keys", "list")
    assert code == 0 and out.splitlines()[0].split()[:3] == ["ID", "NAME", "SCOPES"] and made["id"] in out
    assert made["secret"] not in out
    code, out, _ = await vg(env, "keys", "revoke", made["id"])
    assert code == 0 and out.startswith(f"revoked {made['id']}")
    code, _, err = await vg(batch, "generations", "list")
    assert code == 3 and "401" in err

    code, out, err = await vg(env, "budgets", "set", "--daily-video-seconds", "600", "--monthly-cost", "12.5")
    assert code == 0, err
    assert out.splitlines()[0].startswith(
        "daily video seconds: 600 s; monthly video seconds: no limit; daily cost: no limit; "
        "monthly cost: $12.5"
    )
    code, out, _ = await vg(env, "--json", "budgets")
    assert code == 0
    daily, monthly = json.loads(out)["remaining"]
    assert (daily["budget"], daily["limit"], daily["used"]) == ("daily_video_seconds", 600, 5)
    assert (monthly["budget"], monthly["limit"], monthly["used"]) == (
        "monthly_cost",
        12.5,
        0,
    )  # the free mock


async def test_generate_takes_the_video_options_and_metadata_and_providers_says_what_each_makes(
    stack: Stack, tmp_path: Path
) -> None:
    env = user_env(stack, tmp_path)
    code, out, err = await vg(
        env,
        "--json",
        "generate",
        "a tall lighthouse",
        "--duration",
        "3",
        "--aspect-ratio",
        "9:16",
        "--resolution",
        "480p",
        "--seed",
        "11",
        "--negative-prompt",
        "fog",
        "--metadata",
        "order_id=42",
        "--metadata",
        "team=ads",
    )
    assert code == 0, err
    made = json.loads(out)
    assert (made["aspect_ratio"], made["resolution"], made["seed"], made["negative_prompt"]) == (
        "9:16",
        "480p",
        11,
        "fog",
    )
    assert made["metadata"] == {"order_id": "42", "team": "ads"}
    code, out, _ = await vg(env, "--json", "generations", "list", "--metadata", "order_id=42")
    assert code == 0 and [g["id"] for g in json.loads(out)] == [made["id"]]
    code, _, err = await vg(env, "generate", "x", "--metadata", "no-equals-sign")
    assert code == 2 and "KEY=VALUE" in err

    code, out, _ = await vg(env, "providers")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["ID", "ENABLED"]
    assert lines[1].split()[:2] == ["mock", "yes"] and lines[2].split()[:2] == ["runway", "no"]
    code, out, _ = await vg(env, "--json", "providers")
    assert code == 0 and json.loads(out)[0]["capabilities"]["seed"] is True


async def test_webhooks_create_takes_every_event_type_the_api_serves_and_events_shows_what_happened(
    stack: Stack, tmp_path: Path
) -> None:
    env = user_env(stack, tmp_path)
    async with httpx.AsyncClient() as http:
        document = (await http.get(f"{stack.base}/openapi.json")).json()
    served = document["components"]["schemas"]["EventType"]["enum"]
    assert {"video.processing", "video.progress", "webhook.disabled"} <= set(served)
    code, out, err = await vg(
        env, "--json", "webhooks", "create", "https://example.test/h", "--events", *served
    )
    assert code == 0, err
    hook = json.loads(out)
    assert hook["events"] == served
    code, _, err = await vg(env, "webhooks", "create", "https://example.test/h", "--events", "video.exploded")
    assert code == 3 and "events" in err  # the API judges a type it does not serve

    code, out, err = await vg(env, "--json", "webhooks", "test", hook["id"])
    assert code == 0, err
    event_id = json.loads(out)["event_id"]
    code, out, err = await vg(env, "--json", "events", "list", "--type", "webhook.test")
    assert code == 0 and [e["id"] for e in json.loads(out)] == [event_id], err
    code, out, err = await vg(env, "events", "list", "--subject", hook["id"])
    assert code == 0 and out.splitlines()[0].split() == ["CREATED_AT", "ID", "TYPE", "SUBJECT"], err
    assert f"webhook.test  webhook {hook['id']}" in out
    code, out, err = await vg(env, "--json", "events", "get", event_id)
    assert code == 0 and json.loads(out)["data"] == {"webhook_id": hook["id"]}, err


async def test_login_saves_a_private_config_that_later_commands_use(stack: Stack, tmp_path: Path) -> None:
    env = user_env(stack, tmp_path, with_key=False)
    code, _, err = await vg(env, "login", "--api-key", "vg_wrong", "--base-url", f"{stack.base}/v1")
    assert code == 3 and not Path(env["VIDEOGEN_CONFIG"]).exists()  # a key the API refuses is not saved

    code, out, err = await vg(env, "login", "--api-key", stack.key, "--base-url", f"{stack.base}/v1")
    assert code == 0, err
    config = Path(env["VIDEOGEN_CONFIG"])
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    code, out, err = await vg(env, "--json", "webhooks", "list")
    assert code == 0 and json.loads(out) == [], err


async def test_listen_receives_verifies_and_prints_a_real_delivery_then_removes_its_endpoint(
    stack: Stack, tmp_path: Path
) -> None:
    async with receiving() as app:  # the user's own local app, which vg listen forwards to
        listener = await asyncio.create_subprocess_exec(
            VG,
            "--json",
            "listen",
            "--events",
            "video.completed",
            "--forward-to",
            app.url("/local"),
            env=user_env(stack, tmp_path),
            stdout=asyncio.subprocess.PIPE,
        )
        assert listener.stdout is not None
        try:
            ready = json.loads(await asyncio.wait_for(listener.stdout.readline(), 30))
            async with AsyncClient(api_key=stack.key, base_url=f"{stack.base}/v1") as client:
                assert [w.id for w in await client.webhooks.list()] == [ready["endpoint"]]
                made = await client.generations.create(prompt="a heron", provider="mock", duration=3)
                printed = json.loads(await asyncio.wait_for(listener.stdout.readline(), 120))
                assert printed["verified"] is True and printed["event"] == "video.completed"
                assert printed["data"]["id"] == made.id and printed["data"]["status"] == "completed"
                forwarded = await app.request(1)  # as sent, signatures and all
                assert (
                    printed["forwarded"] == 200 and forwarded.headers["webhook-id"] == printed["webhook_id"]
                )
                assert json.loads(forwarded.body)["data"]["id"] == made.id

                listener.send_signal(signal.SIGINT)
                assert await asyncio.wait_for(listener.wait(), 30) == 0
                assert await client.webhooks.list() == []  # the endpoint went with it
        finally:
            if listener.returncode is None:
                listener.kill()
                await listener.wait()


async def test_a_generation_waiting_for_the_providers_capacity_shows_its_priority_and_place_in_line(
    base_env: dict[str, str], common_settings: CommonSettings, store: Store, tmp_path: Path
) -> None:
    # The mock runs one at a time here, each for a minute: the first holds the slot, the next waits.
    limited = {"VIDEOGEN_MOCK_MAX_CONCURRENCY": "1", "VIDEOGEN_MOCK_LATENCY_MS": "60000"}
    async with running_stack(base_env, common_settings, store, tmp_path / "logs", env=limited) as stack:
        env = user_env(stack, tmp_path)
        code, out, err = await vg(env, "--json", "generate", "holds the slot", "--duration", "3")
        assert code == 0, err
        holder = json.loads(out)["id"]

        async def holding() -> bool:
            code, out, _ = await vg(env, "--json", "generations", "get", holder)
            return code == 0 and json.loads(out)["status"] == "processing"

        await eventually(holding, 60, "the first generation holds the provider's only slot")
        code, out, err = await vg(
            env, "--json", "generate", "waits its turn", "--duration", "3", "--priority", "high"
        )
        assert code == 0, err
        made = json.loads(out)
        assert made["priority"] == "high"
        seen: dict[str, Any] = {}

        async def waiting() -> bool:
            code, out, _ = await vg(env, "--json", "generations", "get", made["id"])
            seen.update(json.loads(out) if code == 0 else {})
            return seen.get("status") == "queued"

        await eventually(waiting, 60, "the second generation waiting for the provider's capacity")
        assert (seen["queue_reason"], seen["queue_position"], seen["priority"]) == (
            "provider_capacity",
            1,
            "high",
        )

        code, _, err = await vg(env, "generations", "wait", made["id"], "--timeout", "2")
        assert code == 5  # timed out, still waiting
        assert f"{made['id']}  queued (provider_capacity, #1 in line)" in err.splitlines()

        for gid in (made["id"], holder):
            assert (await vg(env, "generations", "cancel", gid))[0] == 0


async def test_generate_names_a_model_and_models_lists_what_each_makes_and_costs(
    stack: Stack, tmp_path: Path
) -> None:
    env = user_env(stack, tmp_path)
    code, out, err = await vg(env, "--json", "generate", "a tall lighthouse", "--model", "mock")
    assert code == 0, err
    assert json.loads(out)["model"] == "mock"
    code, _, err = await vg(env, "generate", "x", "--model", "ray-2")  # the mock serves no ray-2
    assert code != 0 and "has no model 'ray-2'" in err

    code, out, err = await vg(env, "--json", "models", "--provider", "runway", "--image", "--duration", "10")
    assert code == 0, err
    assert [m["id"] for m in json.loads(out)] == ["gen4.5", "gen4_turbo"]
    code, out, _ = await vg(env, "models", "--provider", "luma")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["PROVIDER", "ID", "DEFAULT"]
    assert lines[1].split()[:3] == ["luma", "ray-2", "yes"] and lines[2].split()[:3] == [
        "luma",
        "ray-flash-2",
        "no",
    ]
    assert "720p $0.142" in lines[1]
