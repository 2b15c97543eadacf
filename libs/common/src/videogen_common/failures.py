"""Why a generation failed: the stable error codes clients see in ``generation.error.code`` and the error
itself, shared by the orchestrator's provider adapters and actor, the api and the store's records."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """The stable ``generation.error.code`` values the real adapters produce (the mock adds ``mock_failure``;
    the api's cancel writes ``canceled``)."""

    # The provider refused the request (invalid input, a prompt it will not take).
    PROVIDER_REJECTED = "provider_rejected"
    # Content moderation refused the prompt or the output.
    CONTENT_POLICY = "content_policy"
    # The provider accepted the task and then failed it, or its output could not be used.
    PROVIDER_ERROR = "provider_error"
    # The generation's deadline passed (or the provider timed the task out).
    PROVIDER_TIMEOUT = "provider_timeout"
    # Not finished by the deadline the client's request set (deadline_seconds or Cancel-After).
    DEADLINE_EXCEEDED = "deadline_exceeded"
    # The provider could not be reached, kept answering 429/5xx, refused our credentials, or is not enabled.
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    # The task was canceled (by the client through the api, or at the provider).
    CANCELED = "canceled"
    # The first frame the request gave could not be fetched, or is not a usable image.
    IMAGE_UNUSABLE = "image_unusable"


@dataclass(frozen=True, slots=True)
class GenerationError:
    """The stable error taxonomy clients see in ``generation.error``."""

    code: str
    message: str
    provider_code: str | None = None
    retriable: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "message": self.message,
            "provider_code": self.provider_code,
            "retriable": self.retriable,
        }
