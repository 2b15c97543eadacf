"""The retention sweeper: deletes the media whose time is up, in one place at a time across replicas.

What is due: a generation's video, thumbnail and first frame once its retention has passed
(``videogen_common.retention``: ``media_due_at``, set when they are stored), a deleted generation's folder
again a little after its delete (and its recorded events and deliveries erased again:
``videogen_common.erasure``), and an expired upload's image. Each pass:

1. takes (or renews) the leased lock ``media-retention`` (``repositories.locks``); another replica holding it
   means this one does nothing, and the lock is renewed before every batch, so a holder that lost it stops;
2. pages through the generations due, by the sparse ``by_media_due`` index, due longest first, ``batch`` at a
   time: deletes their objects in one storage call per 1,000 keys (S3 DeleteObjects), then marks them swept
   (``media_deleted_at``, out of the index) in one command. A deleted generation still owing the notifier
   events waits for them to be taken in (it is due again later), so what they deliver is erased too;
3. the same for expired uploads (``by_expiry``): their images, then their documents;
4. removes the history past its keeping: events older than ``events.KEPT`` (90 days), deliveries older than
   ``deliveries.KEPT`` (30 days) and audit events older than ``audit.KEPT`` (400 days), one range of each
   collection's ``by_created`` index (a pass removes what came due since the last one);
5. lets go of the lock (also when the pass failed).

An object the storage refuses to delete (S3 answers AccessDenied, or an object lock) does not hold up the
rest: the storage deletes the others, the generations whose objects all went are marked, and one with an
object left is due again an hour later (``RETRY_FAILED_AFTER``; counted in ``failed``, logged with the
storage's reason); an upload whose image stayed is passed over for the rest of the pass and looked at again
next pass. A storage that cannot be reached at all fails the pass, which the next one repeats.

Killed mid-batch, a sweeper leaves the batch unmarked: the next pass (here, or elsewhere once the lease has
run out) deletes the same objects again, which is not an error, and marks them. Nothing is deleted before it
is due: every page is read as of the pass's clock, and a due time only ever moves earlier (a shorter
retention) or is set by a delete."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from videogen_common.clock import Clock
from videogen_common.erasure import ERASE_AGAIN_AFTER, erase_generation
from videogen_common.media import MediaDeleteFailed, MediaStore
from videogen_common.repositories import audit, deliveries, events
from videogen_common.repositories.audit import AuditRepository
from videogen_common.repositories.deletions import GenerationDeletions
from videogen_common.repositories.deliveries import DeliveryRepository
from videogen_common.repositories.events import EventRepository
from videogen_common.repositories.locks import LockRepository
from videogen_common.repositories.uploads import UploadRepository
from videogen_common.store import Store

log = logging.getLogger(__name__)

LOCK = "media-retention"
# A generation with an object the storage would not delete is looked at again this much later.
RETRY_FAILED_AFTER = timedelta(hours=1)


@dataclass(slots=True)
class Swept:
    """What a pass removed: generations whose media it deleted, uploads it removed, objects it asked the
    storage to delete, deleted generations it left for later (their events still on their way), and
    generations or uploads with an object the storage would not delete (due again later); and the events,
    deliveries and audit events it removed past their keeping (``expired``, by collection)."""

    generations: int = 0
    uploads: int = 0
    objects: int = 0
    postponed: int = 0
    failed: int = 0
    expired: dict[str, int] = field(default_factory=dict)
    held: bool = field(default=True, repr=False)


@dataclass(kw_only=True, eq=False)
class RetentionSweeper:
    """One instance's sweeper: its store and media storage, the sweep's lock held as ``owner`` for ``lease``
    at a time, ``batch`` generations or uploads read a page; ``on_swept`` is told of each pass."""

    store: Store
    media: MediaStore
    clock: Clock
    owner: str
    lease: timedelta
    batch: int
    on_swept: Callable[[Swept], None] | None = None

    def __post_init__(self) -> None:
        self._locks = LockRepository(self.store)
        self._generations = GenerationDeletions(self.store)
        self._uploads = UploadRepository(self.store)

    async def run_once(self) -> Swept:
        """One pass, if this instance holds the lock (``held`` False if another does)."""
        swept = Swept()
        if not await self._hold():
            swept.held = False
            return swept
        try:
            while await self._hold() and await self._generation_batch(swept):
                pass
            passed: list[str] = []
            while await self._hold() and await self._upload_batch(swept, passed):
                pass
            if await self._hold():
                await self._expire(swept)
        finally:
            if self.on_swept is not None:
                self.on_swept(swept)
            if swept.generations or swept.uploads or swept.postponed or swept.failed:
                log.info(
                    "swept media past its retention",
                    extra={
                        "generations": swept.generations,
                        "uploads": swept.uploads,
                        "objects": swept.objects,
                        "postponed": swept.postponed,
                        "failed": swept.failed,
                    },
                )
            if swept.expired:
                log.info("removed history past its keeping", extra=swept.expired)
            await self._locks.release(LOCK, self.owner)
        return swept

    async def _expire(self, swept: Swept) -> None:
        """Remove the events, deliveries and audit events made longer ago than each is kept (``expired``: the
        counts of those that removed any)."""
        now = self.clock.now()
        removed = {
            "events": await EventRepository(self.store).expire_before(now - events.KEPT),
            "deliveries": await DeliveryRepository(self.store).expire_before(now - deliveries.KEPT),
            "audit_events": await AuditRepository(self.store).expire_before(now - audit.KEPT),
        }
        swept.expired = {name: count for name, count in removed.items() if count}

    async def _hold(self) -> bool:
        now = self.clock.now()
        return await self._locks.hold(LOCK, self.owner, now, now + self.lease)

    async def _generation_batch(self, swept: Swept) -> bool:
        """One page of generations due: whether it did anything (else the pass moves on)."""
        now = self.clock.now()
        due = await self._generations.due(now, self.batch)
        waiting = [item.id for item in due if item.deleted and item.owes_events]
        ready = [item for item in due if not (item.deleted and item.owes_events)]
        keys = [key for item in ready if not item.deleted for key in item.keys]
        kept = await self._delete(keys)
        swept.objects += len(keys) - len(kept)
        failed = {item.id for item in ready if not item.deleted and kept.intersection(item.keys)}
        for item in ready:
            if item.deleted:
                try:
                    erased = await erase_generation(self.store, self.media, item.id, item.account_id)
                except MediaDeleteFailed as exc:
                    log.warning("media of a deleted generation not deleted: %s", exc, extra={"id": item.id})
                    failed.add(item.id)
                else:
                    swept.objects += erased.objects
        marked = await self._generations.swept([item.id for item in ready if item.id not in failed], now)
        await self._generations.due_again(waiting, now + ERASE_AGAIN_AFTER)
        await self._generations.due_again(sorted(failed), now + RETRY_FAILED_AFTER)
        swept.generations += marked
        swept.postponed += len(waiting)
        swept.failed += len(failed)
        return bool(marked or waiting or failed)

    async def _upload_batch(self, swept: Swept, passed: list[str]) -> bool:
        """One page of expired uploads, but for those ``passed`` over this pass (an image the storage kept:
        they are added to it)."""
        now = self.clock.now()
        due = await self._uploads.due(now, self.batch, passed)
        kept = await self._delete([key for _, key in due])
        swept.objects += len(due) - len(kept)
        passed += [upload_id for upload_id, key in due if key in kept]
        swept.failed += len(kept)
        removed = await self._uploads.forget([upload_id for upload_id, key in due if key not in kept], now)
        swept.uploads += removed
        return bool(removed or kept)

    async def _delete(self, keys: list[str]) -> frozenset[str]:
        """Delete these objects: the keys the storage would not delete (it deleted the others)."""
        try:
            await self.media.delete(keys)
        except MediaDeleteFailed as exc:
            log.warning("media past its retention not deleted: %s", exc)
            return frozenset(exc.keys)
        return frozenset()
