"""``client.generations``: create, read, list, cancel, wait for and download generations."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal, Required, TypedDict, Unpack

from videogen_client._keywords import spelled_out
from videogen_client._paging import CreatedBetween, walk
from videogen_client._transport import IDEMPOTENCY_KEY, Resource, Sleep, Transport
from videogen_client.enums import AspectRatio, Priority, Provider, Resolution, Status
from videogen_client.errors import (
    APIConnectionError,
    GenerationFailedError,
    RateLimitError,
    VideogenError,
    WaitTimeoutError,
)
from videogen_client.models import (
    Generation,
    GenerationList,
    ModelInfo,
    ModelList,
    ProviderInfo,
    ProviderList,
    RoutingOptions,
    Upload,
)

ProgressCallback = Callable[[Generation], None]
# A first frame: a URL, an upload's id, or the image itself (a path, its bytes, or a binary file object).
ImageSource = str | Path | bytes | IO[bytes]
# Bytes written so far, and the total if the server said (Content-Length).
DownloadProgress = Callable[[int, int | None], None]
DEFAULT_WAIT_TIMEOUT_S = 600.0
MAX_PREFER_WAIT_S = 60  # the most the API waits for one request
CHUNK = 64 * 1024


class CreateParams(TypedDict, total=False):
    """The keywords of ``generations.create`` (and ``create_and_wait``), declared here once: a new field of a
    generation is a line here (and a word in ``create``'s docstring). The body sent is these, in this order,
    but the ``idempotency_key`` (a header) and those left out or None."""

    prompt: Required[str]
    provider: Required[Provider | Literal["auto"] | str]
    duration: Required[int]
    model: str | None
    aspect_ratio: AspectRatio | str | None
    resolution: Resolution | str | None
    seed: int | None
    negative_prompt: str | None
    metadata: dict[str, str] | None
    image: ImageSource | None
    deadline_seconds: int | None
    priority: Priority | None
    fallback_providers: Sequence[Provider | str] | None
    routing: RoutingOptions | Mapping[str, Any] | None
    fallback_on_failure: bool | None
    retention_days: int | None
    idempotency_key: str | None


class GenerationFilters(CreatedBetween, total=False):
    """Which generations ``generations.list`` and ``list_page`` answer (all of these that are given)."""

    status: Status | str | list[Status | str] | None
    provider: Provider | str | None
    metadata: dict[str, str] | None


_BODY = tuple(name for name in CreateParams.__annotations__ if name != "idempotency_key")


class AsyncGenerations(Resource):
    def __init__(
        self, transport: Transport, sleep: Sleep, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(transport)
        self._sleep = sleep
        self._monotonic = monotonic

    @spelled_out
    async def create(self, **params: Unpack[CreateParams]) -> Generation:
        """Submit a generation; it is durably stored when this returns. The call carries an
        ``Idempotency-Key`` (one made here unless given), reused by every retry of it, so a retry never
        makes a second generation. ``model``: the provider's model to ask for (``client.models.list()``;
        None: its default). ``aspect_ratio``, ``resolution``, ``seed``, ``negative_prompt``: what the
        provider can make is in ``client.providers.list()``. ``metadata``: your own keys and values, returned
        on the generation and in its webhooks. ``image``: the first frame, as an ``https://`` URL, an
        upload's id, or a file (a path, bytes or a binary file object, uploaded first). ``deadline_seconds``:
        past it, the generation fails with ``deadline_exceeded``. ``priority``: ``high``, ``normal`` or
        ``low``, the order your own generations start in when they wait for the provider's capacity.

        Routing: ``provider="auto"`` lets the API pick any enabled provider that can make it;
        ``fallback_providers`` names where else it may go, in order (with ``"auto"``: the only providers it
        may go to), each a provider or ``"provider:model"``; ``routing={"sort": "price"}`` (or ``"speed"``)
        orders the candidates; with ``fallback_on_failure=True`` it also moves on when a provider failed a
        task it had accepted. Where it went and why are ``generation.route`` and ``generation.attempts``.

        ``retention_days``: delete its video, thumbnail and first frame this many days after the video is
        made, sooner than the deployment (or your account) would; never later."""
        key = params.get("idempotency_key") or f"sdk_{uuid.uuid4().hex}"
        body: dict[str, Any] = {name: value for name in _BODY if (value := params.get(name)) is not None}
        if "image" in body:
            body["image"] = await self._image(body["image"])
        if "fallback_providers" in body:
            body["fallback_providers"] = list(body["fallback_providers"])
        if "routing" in body:
            body["routing"] = _routing(body["routing"])
        return await self._t.call(
            Generation, "POST", "generate", json_body=body, headers={IDEMPOTENCY_KEY: key}
        )

    async def _image(self, image: ImageSource) -> dict[str, str]:
        if isinstance(image, str):
            if image.startswith(("http://", "https://")):
                return {"url": image}
            if image.startswith("upl_"):
                return {"upload_id": image}
            raise VideogenError(f"image: a URL, an upload id (upl_…) or a file, not {image!r}")
        upload = await AsyncUploads(self._t).create(image)
        return {"upload_id": upload.id}

    async def get(self, generation_id: str) -> Generation:
        return await self._t.call(Generation, "GET", f"generations/{generation_id}")

    @spelled_out
    async def list_page(
        self, *, limit: int | None = None, cursor: str | None = None, **filters: Unpack[GenerationFilters]
    ) -> GenerationList:
        """One page of the account's generations, newest first; ``next_cursor`` leads to the next.
        ``metadata``: only those whose metadata has each of these values."""
        metadata = filters.pop("metadata", None) or {}
        params = {
            **filters,
            **{f"metadata[{name}]": value for name, value in metadata.items()},
            "limit": limit,
            "cursor": cursor,
        }
        return await self._t.call(GenerationList, "GET", "generations", params=params)

    @spelled_out
    def list(
        self, *, page_size: int | None = None, **filters: Unpack[GenerationFilters]
    ) -> AsyncIterator[Generation]:
        """Every generation that matches, newest first, fetching page after page as it is iterated."""
        return walk(lambda cursor: self.list_page(limit=page_size, cursor=cursor, **filters))

    async def cancel(self, generation_id: str) -> Generation:
        return await self._t.call(Generation, "POST", f"generations/{generation_id}/cancel")

    async def delete(self, generation_id: str) -> None:
        """Delete the generation: its video, thumbnail and first frame are deleted from storage (its links
        answer 410), its prompt, negative prompt, metadata and image erased, and an unfinished one canceled
        first. ``get`` still answers it as a tombstone (``deleted`` true); lists leave it out; usage still
        counts it. Deleting it again is not an error."""
        await self._t.request("DELETE", f"generations/{generation_id}")

    async def wait(
        self,
        generation_id: str,
        *,
        timeout: float = DEFAULT_WAIT_TIMEOUT_S,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 0.5,
        max_poll_interval: float = 5.0,
    ) -> Generation:
        """Follow the generation until it is finished and return it ``completed``. ``on_progress`` is told
        each change seen (status or progress). Raises ``GenerationFailedError`` if it failed (or was
        cancelled) and ``WaitTimeoutError`` after ``timeout`` seconds.

        Follows the generation's event stream: each change is pushed as it happens, and a dropped connection
        is resumed where it left off (``Last-Event-ID``), after a pause that backs off from ``poll_interval``
        to ``max_poll_interval``. Where the API refuses a stream (the account holds too many open), it asks
        with ``Prefer: wait`` instead: each request answers when the generation finishes or after a while."""
        deadline = self._monotonic() + timeout
        follower = _Follower(on_progress)
        streaming, last_event_id, pause = True, None, poll_interval
        while (left := deadline - self._monotonic()) > 0:
            try:
                async with asyncio.timeout(left):
                    if not streaming:
                        if follower.see(await self._get_waiting(generation_id, left)):
                            return follower.finished()
                        continue
                    async for event in self._t.events(f"generations/{generation_id}/events", last_event_id):
                        if event.event != "generation":
                            continue
                        last_event_id = event.id or last_event_id
                        if follower.see(Generation.model_validate_json(event.data)):
                            return follower.finished()
                        pause = poll_interval
                    # The stream ended before the generation did (the api shutting down): resume at once.
                    continue
            except TimeoutError:
                break
            except RateLimitError as exc:
                if exc.type.endswith(":too-many-streams"):
                    streaming = False
                    continue
                await self._sleep(min(exc.retry_after or pause, max(0.0, deadline - self._monotonic())))
            except APIConnectionError:
                await self._sleep(min(pause, max(0.0, deadline - self._monotonic())))
                pause = min(pause * 2, max_poll_interval)
        raise WaitTimeoutError(follower.latest or await self.get(generation_id), timeout)

    async def _get_waiting(self, generation_id: str, left: float) -> Generation:
        """The generation once it is finished, or as it is after up to ``Prefer: wait`` seconds: less than
        what is left of the wait, and than the client's read timeout."""
        read = self._t.http.timeout.read
        seconds = max(1, int(min(left, MAX_PREFER_WAIT_S, (read or 65.0) - 5.0)))
        return await self._t.call(
            Generation, "GET", f"generations/{generation_id}", headers={"Prefer": f"wait={seconds}"}
        )

    @spelled_out
    async def create_and_wait(
        self,
        *,
        timeout: float = DEFAULT_WAIT_TIMEOUT_S,
        on_progress: ProgressCallback | None = None,
        **params: Unpack[CreateParams],
    ) -> Generation:
        """``create``, then ``wait``: the generation, completed."""
        generation = await self.create(**params)
        if on_progress is not None:
            on_progress(generation)
        return await self.wait(generation.id, timeout=timeout, on_progress=on_progress)

    async def iter_video(self, generation_id: str) -> AsyncGenerator[bytes, None]:
        """The completed generation's video, chunk by chunk."""
        async for chunk, _ in self._video_chunks(generation_id):
            yield chunk

    async def download(
        self,
        generation_id: str,
        destination: str | Path | IO[bytes],
        *,
        on_progress: DownloadProgress | None = None,
    ) -> int:
        """Write the completed generation's video to a path or an open binary file; returns the bytes
        written. ``on_progress(done, total)`` is told after each chunk."""
        done = 0
        if isinstance(destination, str | Path):
            # File calls off the event loop, so a large download never stalls the caller's other tasks.
            out = await asyncio.to_thread(Path(destination).open, "wb")
            try:
                return await self.download(generation_id, out, on_progress=on_progress)
            finally:
                await asyncio.to_thread(out.close)
        async for chunk, total in self._video_chunks(generation_id):
            await asyncio.to_thread(destination.write, chunk)
            done += len(chunk)
            if on_progress is not None:
                on_progress(done, total)
        return done

    async def _video_chunks(self, generation_id: str) -> AsyncIterator[tuple[bytes, int | None]]:
        generation = await self.get(generation_id)
        if generation.video_url is None:
            raise VideogenError(f"generation {generation_id} has no video (status {generation.status})")
        async with self._t.stream(generation.video_url) as response:
            if response.status_code != 200:
                await response.aread()
                raise VideogenError(
                    f"downloading {generation_id}: {response.status_code} {response.text[:200]}"
                )
            length = response.headers.get("content-length")
            total = int(length) if length is not None and length.isdigit() else None
            async for chunk in response.aiter_bytes(CHUNK):
                yield chunk, total


class _Follower:
    """What a wait has seen of a generation: tells ``on_progress`` of each change; says when it is over."""

    def __init__(self, on_progress: ProgressCallback | None) -> None:
        self._on_progress = on_progress
        self.latest: Generation | None = None

    def see(self, generation: Generation) -> bool:
        """True once ``generation`` is finished."""
        seen = self.latest
        changed = seen is None or (generation.status, generation.progress, generation.updated_at) != (
            seen.status,
            seen.progress,
            seen.updated_at,
        )
        self.latest = generation
        if changed and self._on_progress is not None:
            self._on_progress(generation)
        return generation.terminal

    def finished(self) -> Generation:
        """The finished generation, if completed; raises ``GenerationFailedError`` if it failed."""
        generation = self.latest
        assert generation is not None
        if generation.status == "failed":
            raise GenerationFailedError(generation)
        return generation


def _routing(routing: RoutingOptions | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if routing is None:
        return None
    if isinstance(routing, RoutingOptions):
        return routing.model_dump(exclude_none=True)
    return dict(routing)


class AsyncProviders(Resource):
    async def list(self) -> list[ProviderInfo]:
        """Every provider the API knows, whether this deployment offers it, and what it can make."""
        return (await self._t.call(ProviderList, "GET", "providers")).data


class AsyncModels(Resource):
    async def list(
        self,
        *,
        provider: Provider | str | None = None,
        image_to_video: bool | None = None,
        text_to_video: bool | None = None,
        duration: int | None = None,
        aspect_ratio: AspectRatio | str | None = None,
        resolution: Resolution | str | None = None,
        seed: bool | None = None,
        negative_prompt: bool | None = None,
        enabled: bool | None = None,
    ) -> list[ModelInfo]:
        """Every model of every provider, as this deployment configures them (what each makes and takes,
        its prices, whether it is its provider's default): those matching every filter given."""
        flags = {
            "image_to_video": image_to_video,
            "text_to_video": text_to_video,
            "seed": seed,
            "negative_prompt": negative_prompt,
            "enabled": enabled,
        }
        params: dict[str, Any] = {
            "provider": provider,
            "duration": duration,
            "aspect_ratio": aspect_ratio,
            "resolution": resolution,
            **{name: ("true" if value else "false") for name, value in flags.items() if value is not None},
        }
        return (await self._t.call(ModelList, "GET", "models", params=params)).data


class AsyncUploads(Resource):
    async def create(self, file: Path | bytes | IO[bytes]) -> Upload:
        """Upload an image (PNG, JPEG or WebP; the API tells the type from the content) for use as a first
        frame: pass ``image=upload.id`` to ``generations.create``."""
        if isinstance(file, Path):
            data = await asyncio.to_thread(file.read_bytes)
            name = file.name
        elif isinstance(file, bytes):
            data, name = file, "image"
        else:
            data, name = await asyncio.to_thread(file.read), "image"
        files = {"file": (name, data, "application/octet-stream")}
        return await self._t.call(Upload, "POST", "uploads", files=files)

    async def get(self, upload_id: str) -> Upload:
        """The upload, until it expires or is deleted (then ``NotFoundError``)."""
        return await self._t.call(Upload, "GET", f"uploads/{upload_id}")

    async def delete(self, upload_id: str) -> None:
        """Delete the upload's image from storage now; it can no longer be used as a first frame."""
        await self._t.request("DELETE", f"uploads/{upload_id}")
