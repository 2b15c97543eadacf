"""Why a generation failed, one taxonomy: the stable codes clients see in ``generation.error.code``
(``ErrorCode``) and the error itself (``GenerationError``), made by the orchestrator's provider adapters and
actor and by the api's cancel, stored on the generation's record, and served as the OpenAPI document's
``ErrorCode`` enumeration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Every ``generation.error.code`` value: what the adapters, the actor and the api's cancel write."""

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
    # The mock provider failed the generation as its prompt or its failure rate asked (development only).
    MOCK_FAILURE = "mock_failure"


@dataclass(frozen=True, slots=True)
class GenerationError:
    """A failed generation's ``error``, as stored and as clients see it. ``code`` is an ``ErrorCode``, kept as
    a plain string when read back: a generation stored with a code this version does not know still reads."""

    code: str
    message: str
    provider_code: str | None = None
    retriable: bool = False

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> GenerationError:
        return cls(doc["code"], doc["message"], doc.get("provider_code"), bool(doc.get("retriable", False)))

    def to_doc(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "message": self.message,
            "provider_code": self.provider_code,
            "retriable": self.retriable,
        }


# The error of a generation its client canceled (POST /v1/generations/{id}/cancel).
CANCELED_BY_CLIENT = GenerationError(ErrorCode.CANCELED, "canceled by the client")
