"""What deleting a generation erases beyond its own document (``repositories.deletions``): every object in
its media folder, and its prompt, metadata, first frame and links in the data of its recorded events and in
the stored bodies of their deliveries (``ERASED_FIELDS``). The api does it as it answers a delete; the
retention sweeper does it again once the generation owes the notifier nothing more, for what was on its way
meanwhile (an event the notifier took in after the delete, a late actor's object). Each step is idempotent."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from videogen_common.media import MediaStore
from videogen_common.records.generation import ERASED_FIELDS
from videogen_common.repositories.deliveries import DeliveryRepository
from videogen_common.repositories.events import EventRepository
from videogen_common.store import Store

# How long after a delete the sweeper erases again (at the earliest: it waits until the generation's owed
# events have been taken in).
ERASE_AGAIN_AFTER = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Erased:
    """What one erasure removed or rewrote."""

    objects: int
    events: int
    deliveries: int


async def erase_generation(store: Store, media: MediaStore, generation_id: str, account_id: str) -> Erased:
    """Delete every object in the generation's media folder, and erase what a delete erases from its
    recorded events' data and its deliveries' bodies."""
    keys = await media.keys_in(generation_id)
    await media.delete(keys)
    events = await EventRepository(store).erase_subject(account_id, generation_id, ERASED_FIELDS)
    deliveries = await DeliveryRepository(store).erase_generation(generation_id, ERASED_FIELDS)
    return Erased(len(keys), events, deliveries)
