"""A real S3-compatible server for the tests: moto's, as a child process on 127.0.0.1, and one fresh bucket
per test."""

from __future__ import annotations

import secrets
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from aiobotocore.session import get_session

from tests.support.engines import EngineProcess
from videogen.engines import EngineSpec, free_port

if TYPE_CHECKING:
    from types_aiobotocore_s3 import S3Client

REGION = "us-east-1"
ACCESS_KEY_ID = "test-access-key"
SECRET_ACCESS_KEY = "test-secret-key"  # moto accepts any credentials, but the client must sign with some


def s3_server(log: Path) -> EngineProcess:
    port = free_port()
    argv = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    return EngineProcess(EngineSpec("s3", argv, port), log)


def endpoint_url(server: EngineProcess) -> str:
    return f"http://127.0.0.1:{server.spec.port}"


@asynccontextmanager
async def s3_client(endpoint: str) -> AsyncIterator[S3Client]:
    """A plain client, for what tests do behind the media store's back: make buckets, read raw objects."""
    async with get_session().create_client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_ACCESS_KEY,
    ) as client:
        yield client


async def new_bucket(endpoint: str) -> str:
    bucket = f"media-{secrets.token_hex(6)}"
    async with s3_client(endpoint) as client:
        await client.create_bucket(Bucket=bucket)
    return bucket


def s3_media_env(endpoint: str, bucket: str, prefix: str = "") -> dict[str, str]:
    """The ``VIDEOGEN_*`` variables that point a service's media at ``bucket``."""
    return {
        "VIDEOGEN_MEDIA_BACKEND": "s3",
        "VIDEOGEN_S3_BUCKET": bucket,
        "VIDEOGEN_S3_KEY_PREFIX": prefix,
        "VIDEOGEN_S3_ENDPOINT_URL": endpoint,
        "VIDEOGEN_S3_REGION": REGION,
        "VIDEOGEN_S3_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "VIDEOGEN_S3_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "VIDEOGEN_S3_FORCE_PATH_STYLE": "true",
    }
