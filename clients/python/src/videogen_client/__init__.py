"""The Python SDK for the videogen API.

from videogen_client import Client

with Client() as client:  # VIDEOGEN_API_KEY, VIDEOGEN_BASE_URL
    video = client.generations.create_and_wait(prompt="a red fox in snow", provider="mock", duration=5)
    client.generations.download(video.id, "fox.mp4")
"""

from videogen_client._client import AsyncClient, Client
from videogen_client.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    BudgetExceededError,
    ConflictError,
    GenerationFailedError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ValidationError,
    VideogenError,
    WaitTimeoutError,
)
from videogen_client.models import (
    ApiKey,
    ApiKeyCreated,
    Delivery,
    Generation,
    ModelInfo,
    ProviderInfo,
    Webhook,
    WebhookCreated,
    WebhookEvent,
)
from videogen_client.resources.generations import CreateParams

__version__ = "0.1.0"

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "ApiKey",
    "ApiKeyCreated",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "BudgetExceededError",
    "Client",
    "ConflictError",
    "CreateParams",
    "Delivery",
    "Generation",
    "GenerationFailedError",
    "InternalServerError",
    "ModelInfo",
    "NotFoundError",
    "PermissionDeniedError",
    "ProviderInfo",
    "RateLimitError",
    "ValidationError",
    "VideogenError",
    "WaitTimeoutError",
    "Webhook",
    "WebhookCreated",
    "WebhookEvent",
]
