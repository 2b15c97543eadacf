"""The TypeScript SDK's ``client.batches`` (clients/typescript), driven from here as test_typescript.py drives
the rest: its ``node --test`` suite against a scripted server on 127.0.0.1 (a create's body and key, a wait's
reads, interval and deadline, the results file parsed line by line while it streams, items paged), and its
suite against a real stack of its own (api, orchestrator and notifier as processes, the real broker and store,
the mock provider, one generation of the account at a provider at a time): a batch created, waited for with
progress, its results iterated and its items paged and filtered, and another canceled midway. Node's output is
shown when it fails."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.client.test_typescript import built, sdk_env, succeed
from tests.support.engines import Engines
from tests.support.env import isolated_env
from tests.support.stack import Stack, own_stack

pytestmark = pytest.mark.e2e
__all__ = ["built"]  # the module's fixture: the package compiled once


@pytest.fixture(scope="module")
async def batches_stack(engines: Engines, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    """A stack for the module. The mock takes two seconds and reports progress as it goes; one generation of
    the account runs at a time, so a batch's items end one by one (a wait sees its counts move) and, while
    one runs, the others wait (a cancel finds some not started)."""
    workdir = tmp_path_factory.mktemp("typescript-batches")
    env = {
        **isolated_env(engines, workdir / "data"),
        "VIDEOGEN_MOCK_LATENCY_MS": "2000",
        "VIDEOGEN_PROGRESS_WRITE_SECONDS": "0.1",
        "VIDEOGEN_ACCOUNT_MAX_IN_FLIGHT": "1",
    }
    async with own_stack(env, workdir / "logs") as stack:
        yield stack


async def test_the_batches_unit_suite_passes_against_a_scripted_server(built: Path) -> None:
    await succeed("node", "--test", "test/unit/batches.test.mjs")


async def test_the_batches_stack_suite_passes(built: Path, batches_stack: Stack) -> None:
    await succeed("node", "--test", "test/stack-batches/", env=sdk_env(batches_stack))
