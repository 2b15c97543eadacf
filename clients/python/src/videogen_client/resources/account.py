"""``client.usage``, ``client.audit_events`` and ``client.events``: what the account made, who changed its
keys and webhooks, and what happened on it as its webhooks deliver it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any, Unpack

from videogen_client._keywords import spelled_out
from videogen_client._paging import CreatedBetween, walk
from videogen_client._transport import M, Resource, Transport
from videogen_client.enums import AuditEventType, EventType
from videogen_client.models import AuditEvent, AuditEventList, Event, EventList, Usage


class AsyncUsage(Resource):
    async def get(
        self,
        *,
        start: datetime | date | None = None,
        end: datetime | date | None = None,
        api_key_id: str | None = None,
    ) -> Usage:
        """Generations and seconds of video by UTC day, provider and status over [start, end) (by default
        the last 30 days), in total and per API key; ``api_key_id``: only that key's."""
        params = {"start": start, "end": end, "api_key_id": api_key_id}
        return await self._t.call(Usage, "GET", "usage", params=params)


class AuditEventFilters(CreatedBetween, total=False):
    """Which changes ``audit_events.list`` and ``list_page`` answer (all of these that are given)."""

    type: AuditEventType | Sequence[AuditEventType] | None
    target_id: str | None


class EventFilters(CreatedBetween, total=False):
    """Which events ``events.list`` and ``list_page`` answer (all of these that are given)."""

    type: EventType | str | Sequence[EventType | str] | None
    subject_id: str | None


class AsyncAuditEvents(Resource):
    @spelled_out
    async def list_page(
        self, *, limit: int | None = None, cursor: str | None = None, **filters: Unpack[AuditEventFilters]
    ) -> AuditEventList:
        return await _typed_page(self._t, AuditEventList, "audit-events", filters, limit=limit, cursor=cursor)

    @spelled_out
    def list(
        self, *, page_size: int | None = None, **filters: Unpack[AuditEventFilters]
    ) -> AsyncIterator[AuditEvent]:
        """Every change to the account's keys and webhooks that matches, newest first, page after page."""
        return walk(lambda cursor: self.list_page(limit=page_size, cursor=cursor, **filters))


class AsyncEvents(Resource):
    async def get(self, event_id: str) -> Event:
        """One event: what happened, to what, and the data its deliveries carried (a delivery's
        ``event_id``)."""
        return await self._t.call(Event, "GET", f"events/{event_id}")

    @spelled_out
    async def list_page(
        self, *, limit: int | None = None, cursor: str | None = None, **filters: Unpack[EventFilters]
    ) -> EventList:
        return await _typed_page(self._t, EventList, "events", filters, limit=limit, cursor=cursor)

    @spelled_out
    def list(self, *, page_size: int | None = None, **filters: Unpack[EventFilters]) -> AsyncIterator[Event]:
        """The account's events that match (of these types; about this generation, endpoint or account),
        newest first, page after page as it is iterated."""
        return walk(lambda cursor: self.list_page(limit=page_size, cursor=cursor, **filters))


async def _typed_page(
    transport: Transport,
    answer: type[M],
    path: str,
    filters: Mapping[str, Any],
    *,
    limit: int | None,
    cursor: str | None,
) -> M:
    """A page of the listing at ``path`` (audit events or events) that matches ``filters``: ``type``, one or
    several, as the API takes them (comma-separated)."""
    params = {**filters, "type": _types(filters.get("type")), "limit": limit, "cursor": cursor}
    return await transport.call(answer, "GET", path, params=params)


def _types(given: str | Sequence[str] | None) -> str | None:
    """One type, or several as the API takes them (comma-separated)."""
    return given if isinstance(given, str) or given is None else ",".join(given)
