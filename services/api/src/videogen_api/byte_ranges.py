"""Which part of a stored file a GET answers with: conditional requests (RFC 9110 §13) and single byte ranges
(RFC 9110 §14), decided from the request's headers and the file's size, ETag and modification time."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import hdrs, web

from videogen_common.media import MediaInfo


@dataclass(frozen=True)
class Plan:
    status: int  # 200, 206, 304 or 416
    start: int = 0
    stop: int = 0  # exclusive

    @property
    def length(self) -> int:
        return self.stop - self.start


def _seconds(info: MediaInfo) -> int:
    # HTTP dates have whole seconds.
    return int(info.modified.timestamp())


def _not_modified(request: web.BaseRequest, info: MediaInfo) -> bool:
    tags = request.if_none_match
    if tags is not None:  # it takes precedence over If-Modified-Since; weak comparison
        return any(tag.value in (info.etag, "*") for tag in tags)
    since = request.if_modified_since
    return since is not None and _seconds(info) <= since.timestamp()


def _if_range_holds(request: web.BaseRequest, info: MediaInfo) -> bool:
    """If-Range: serve the range only if the client's copy is this very version (strong comparison)."""
    value = request.headers.get(hdrs.IF_RANGE)
    if value is None:
        return True
    if value.startswith('"'):
        return value == f'"{info.etag}"'
    date = request.if_range  # None for a weak tag or anything unparsable: then the range is not served
    return date is not None and _seconds(info) == date.timestamp()


def plan(request: web.BaseRequest, info: MediaInfo) -> Plan:
    if _not_modified(request, info):
        return Plan(304)
    full = Plan(200, 0, info.size)
    if hdrs.RANGE not in request.headers or not _if_range_holds(request, info):
        return full
    try:
        wanted = request.http_range
    except ValueError:
        # Several ranges, another unit, or nonsense: a server may ignore Range and send the whole file.
        return full
    start, stop = wanted.start, wanted.stop
    if start is None:  # not produced by aiohttp's parser for a present header; kept total for the type
        return full
    if start < 0:  # a suffix: the last -start bytes
        start = max(info.size + start, 0)
        stop = info.size
    else:
        stop = info.size if stop is None else min(stop, info.size)
    if start >= info.size:
        return Plan(416)
    return Plan(206, start, stop)
