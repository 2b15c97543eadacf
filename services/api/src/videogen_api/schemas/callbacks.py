"""What the providers' callback route answers (``routes.provider_callbacks``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CallbackReceived(BaseModel):
    """A provider callback's answer: the same whatever became of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    received: bool = Field(True, description="Always true: the call was taken (it tells the caller nothing).")
