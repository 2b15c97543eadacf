"""A retention sweeper in a process of its own, for a test that kills it: the orchestrator's
``RetentionSweeper`` on the store and media the environment's ``VIDEOGEN_*`` name, one pass. Its media store
prints ``deleted N`` on stdout after each batch of deletes, and after the ``--hang-after``-th it stops there
for good, the batch's objects deleted and the batch not yet marked: mid-batch, for a SIGKILL to find it.

    python -m tests.support.sweeper_process --owner orch-a --batch 40 --lease 30 --hang-after 2"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from datetime import timedelta

from tests.support.media import PassThroughMedia
from videogen_common.clock import SystemClock
from videogen_common.media import MediaStore, open_media_store
from videogen_common.settings import CommonSettings, load_settings
from videogen_common.store import connect
from videogen_orchestrator.retention_sweeper import RetentionSweeper


class Announcing(PassThroughMedia):
    """``inner``, saying each batch of deletes on stdout, and never coming back from the ``hang_after``-th."""

    def __init__(self, inner: MediaStore, hang_after: int) -> None:
        super().__init__(inner)
        self.hang_after = hang_after
        self.deletes = 0

    async def delete(self, keys: Sequence[str]) -> None:
        await self.inner.delete(keys)
        self.deletes += 1
        sys.stdout.write(f"deleted {len(keys)}\n")
        sys.stdout.flush()
        if self.deletes == self.hang_after:
            await asyncio.Event().wait()


async def sweep(owner: str, batch: int, lease: float, hang_after: int) -> None:
    settings = load_settings(CommonSettings)
    client, store = connect(settings.mongo_url, settings.mongo_db, app_name="sweeper-process")
    try:
        async with open_media_store(settings) as media:
            sweeper = RetentionSweeper(
                store=store,
                media=Announcing(media, hang_after),
                clock=SystemClock(),
                owner=owner,
                lease=timedelta(seconds=lease),
                batch=batch,
            )
            swept = await sweeper.run_once()
            sys.stdout.write(f"swept {swept.generations} {swept.uploads}\n")
    finally:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--owner", required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--lease", type=float, required=True)
    parser.add_argument("--hang-after", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(sweep(args.owner, args.batch, args.lease, args.hang_after))


if __name__ == "__main__":
    main()
