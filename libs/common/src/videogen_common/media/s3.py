"""Media in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2…), through aiobotocore."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC
from typing import TYPE_CHECKING

from aiobotocore.config import AioConfig
from aiobotocore.session import AioSession, get_session
from botocore.exceptions import ClientError

from videogen_common.media.storage import (
    CHUNK_BYTES,
    DELETE_BATCH,
    MediaChanged,
    MediaDeleteFailed,
    MediaInfo,
    check_folder,
    check_key,
    content_type_of,
)
from videogen_common.settings import CommonSettings

if TYPE_CHECKING:
    from types_aiobotocore_s3 import S3Client


def _status(exc: ClientError) -> int | None:
    return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")


class S3MediaStore:
    """Objects ``{prefix}{key}`` in one bucket. The client's lifetime belongs to whoever made it (see
    ``open_s3_media_store``)."""

    def __init__(self, client: S3Client, bucket: str, prefix: str = "") -> None:
        self._client = client
        self.bucket = bucket
        self.prefix = prefix

    def object_key(self, key: str) -> str:
        return self.prefix + check_key(key)

    async def put(self, key: str, data: bytes) -> None:
        await self._client.put_object(
            Bucket=self.bucket, Key=self.object_key(key), Body=data, ContentType=content_type_of(key)
        )

    async def get(self, key: str) -> bytes | None:
        try:
            response = await self._client.get_object(Bucket=self.bucket, Key=self.object_key(key))
        except self._client.exceptions.NoSuchKey:
            return None
        async with response["Body"] as body:
            return await body.read()

    async def stat(self, key: str) -> MediaInfo | None:
        try:
            head = await self._client.head_object(Bucket=self.bucket, Key=self.object_key(key))
        except ClientError as exc:
            if _status(exc) == 404:
                return None
            raise
        return MediaInfo(
            size=head["ContentLength"],
            etag=head["ETag"].strip('"'),
            modified=head["LastModified"].astimezone(UTC),
        )

    async def delete(self, keys: Sequence[str]) -> None:
        """One DeleteObjects per ``DELETE_BATCH`` keys, in quiet mode (S3 answers only the failures). S3
        reports a key with no object as deleted."""
        key_of = {self.object_key(key): key for key in keys}
        names = list(key_of)
        failed: list[str] = []
        reasons: list[str] = []
        for start in range(0, len(names), DELETE_BATCH):
            batch = names[start : start + DELETE_BATCH]
            answer = await self._client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": [{"Key": name} for name in batch], "Quiet": True}
            )
            for error in answer.get("Errors", ()):
                failed.append(key_of.get(error.get("Key", ""), error.get("Key", "")))
                reasons.append(f"{error.get('Key')}: {error.get('Code')} {error.get('Message')}")
        if failed:
            raise MediaDeleteFailed(f"{len(failed)} objects not deleted: {'; '.join(reasons[:5])}", failed)

    async def keys_in(self, folder: str) -> list[str]:
        """Page by page (ListObjectsV2, 1,000 keys a page), without botocore's paginator, whose model it
        would read from disk on the event loop."""
        prefix, keys, token = f"{self.prefix}{check_folder(folder)}/", [], None
        while True:
            if token is None:
                page = await self._client.list_objects_v2(Bucket=self.bucket, Prefix=prefix)
            else:
                page = await self._client.list_objects_v2(
                    Bucket=self.bucket, Prefix=prefix, ContinuationToken=token
                )
            keys += [obj["Key"][len(self.prefix) :] for obj in page.get("Contents", ())]
            if not page.get("IsTruncated"):
                return keys
            token = page["NextContinuationToken"]

    @asynccontextmanager
    async def open_range(
        self, key: str, info: MediaInfo, start: int, stop: int
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        if start >= stop:
            yield _nothing()
            return
        try:
            # If-Match: the bytes come from the very object whose size and ETag the response announced.
            response = await self._client.get_object(
                Bucket=self.bucket,
                Key=self.object_key(key),
                Range=f"bytes={start}-{stop - 1}",
                IfMatch=f'"{info.etag}"',
            )
        except ClientError as exc:
            if _status(exc) in (404, 412):
                raise MediaChanged(str(exc)) from None
            raise
        async with response["Body"] as body:
            yield body.iter_chunks(CHUNK_BYTES)


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield


def _load_client_data(session: AioSession) -> None:
    """Botocore reads its configuration and the S3 model from disk while a client is created; done here, in a
    worker thread, the loader's cache answers those reads without blocking the event loop."""
    session.get_scoped_config()
    loader = session.get_component("data_loader")
    loader.load_data("endpoints")
    loader.load_data("partitions")
    loader.load_data("sdk-default-configuration")
    # The same arguments as the client's own calls, which the loader's cache is keyed by.
    loader.load_service_model("s3", "service-2", api_version=None)
    loader.load_service_model("s3", "endpoint-rule-set-1", api_version=None)


@asynccontextmanager
async def open_s3_media_store(settings: CommonSettings) -> AsyncIterator[S3MediaStore]:
    session = get_session()
    await asyncio.to_thread(_load_client_data, session)
    config = AioConfig(
        region_name=settings.s3_region,
        s3={"addressing_style": "path" if settings.s3_force_path_style else "auto"},
        # Standard mode retries throttling and 5xx with backoff (legacy mode reads another file on the loop).
        retries={"mode": "standard", "max_attempts": 3},
        max_pool_connections=settings.s3_max_connections,
        connect_timeout=10,
        read_timeout=60,
        # Checksums only where S3 requires them: many S3-compatible servers refuse the newer default trailers.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    secret = settings.s3_secret_access_key
    async with session.create_client(
        "s3",
        endpoint_url=settings.s3_endpoint_url,
        aws_access_key_id=settings.s3_access_key_id,
        aws_secret_access_key=secret.get_secret_value() if secret is not None else None,
        config=config,
    ) as client:
        yield S3MediaStore(client, settings.s3_bucket, settings.s3_key_prefix)
