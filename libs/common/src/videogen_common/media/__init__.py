"""Media (mp4, jpg) behind one small interface (``storage``), kept on disk (``local``) or in an S3-compatible
bucket (``s3``, loaded only by processes that use it), and the signed links through which the api serves it
(``links``)."""

from videogen_common.media.backend import open_media_store
from videogen_common.media.links import signed_media_url, verify_media_link
from videogen_common.media.local import LocalMediaStore
from videogen_common.media.storage import (
    CHUNK_BYTES,
    CONTENT_TYPES,
    DELETE_BATCH,
    MediaChanged,
    MediaDeleteFailed,
    MediaInfo,
    MediaStore,
    check_folder,
    check_key,
    content_type_of,
)

__all__ = [
    "CHUNK_BYTES",
    "CONTENT_TYPES",
    "DELETE_BATCH",
    "LocalMediaStore",
    "MediaChanged",
    "MediaDeleteFailed",
    "MediaInfo",
    "MediaStore",
    "check_folder",
    "check_key",
    "content_type_of",
    "open_media_store",
    "signed_media_url",
    "verify_media_link",
]
