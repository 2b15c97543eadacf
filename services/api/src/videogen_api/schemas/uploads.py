"""An image uploaded for use as a first frame (``POST /v1/uploads``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from videogen_api.schemas.common import Body, ImageType, Moment

UploadId = Annotated[str, Field(pattern=r"^upl_[0-9a-z]{26}$")]


class Upload(Body):
    """An image uploaded for use as a first frame (``"image": {"upload_id": …}`` on POST /v1/generate)."""

    id: UploadId
    content_type: Annotated[ImageType, Field(description="From its content.")]
    bytes: Annotated[int, Field(ge=1)]
    width: Annotated[int, Field(ge=1)]
    height: Annotated[int, Field(ge=1)]
    created_at: Moment
    expires_at: Annotated[Moment, Field(description="Usable in a request until then.")]
