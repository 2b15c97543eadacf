"""Every error the SDK raises derives from ``VideogenError``. An answer with an error status becomes the
subclass for its status, carrying the problem document's fields and the request id to quote to support."""

from __future__ import annotations

from typing import TYPE_CHECKING

from videogen_client.models import BudgetProblem, FieldError, Problem

if TYPE_CHECKING:
    from videogen_client.models import Generation


class VideogenError(Exception):
    """Base class of the SDK's errors."""


class APIConnectionError(VideogenError):
    """The API could not be reached, or the connection broke before an answer came."""


class APITimeoutError(APIConnectionError):
    """No answer within the client's timeout."""


class APIStatusError(VideogenError):
    """The API answered with an error status (4xx/5xx)."""

    def __init__(self, status: int, problem: Problem, request_id: str | None) -> None:
        self.status = status
        self.problem = problem
        self.type = problem.type
        self.title = problem.title
        self.detail = problem.detail
        self.request_id = request_id
        message = f"{status} {problem.title or 'error'}"
        if problem.detail:
            message += f": {problem.detail}"
        if request_id:
            message += f" (request {request_id})"
        super().__init__(message)


class BadRequestError(APIStatusError):
    """400, 413, 415: the request could not be read."""


class AuthenticationError(APIStatusError):
    """401: no API key, or one the API does not know."""


class PermissionDeniedError(APIStatusError):
    """403: the API key does not hold the scope the request needs (``scope``); nothing was done."""

    @property
    def scope(self) -> str | None:
        """The scope the request needed (one of ``models.Scope``)."""
        found = (self.problem.model_extra or {}).get("scope")
        return found if isinstance(found, str) else None


class NotFoundError(APIStatusError):
    """404: no such resource in this account."""


class ConflictError(APIStatusError):
    """409: the resource's state does not allow it (e.g. cancelling a finished generation)."""


class ValidationError(APIStatusError):
    """422: a field, parameter or header is invalid; ``errors`` names each."""

    @property
    def errors(self) -> list[FieldError]:
        return self.problem.errors


class RateLimitError(APIStatusError):
    """429: over the account's rate or its limit of generations in flight."""

    def __init__(
        self, status: int, problem: Problem, request_id: str | None, retry_after: float | None
    ) -> None:
        super().__init__(status, problem, request_id)
        self.retry_after = retry_after


class BudgetExceededError(RateLimitError):
    """429 budget-exceeded: the generation would pass a budget; ``budget`` says which, whose, what is left
    and when it resets. Not retried: waiting seconds does not help before ``budget.resets_at``."""

    @property
    def budget(self) -> BudgetProblem:
        return BudgetProblem.model_validate(self.problem.model_dump())


BUDGET_EXCEEDED = "urn:videogen:problem:budget-exceeded"


class InternalServerError(APIStatusError):
    """5xx: the API failed or is unavailable."""


class GenerationFailedError(VideogenError):
    """A generation that was waited for ended ``failed``; ``generation.error`` says why."""

    def __init__(self, generation: Generation) -> None:
        self.generation = generation
        error = generation.error
        reason = f"{error.code}: {error.message}" if error is not None else "no reason given"
        super().__init__(f"generation {generation.id} failed ({reason})")


class WaitTimeoutError(VideogenError):
    """A wait ran out of time before the generation finished; ``generation`` is its last state seen."""

    def __init__(self, generation: Generation, timeout: float) -> None:
        self.generation = generation
        super().__init__(f"generation {generation.id} still {generation.status} after {timeout:g} s")


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: BadRequestError,
    415: BadRequestError,
    422: ValidationError,
}


def status_error(
    status: int, problem: Problem, request_id: str | None, retry_after: float | None
) -> APIStatusError:
    if status == 429:
        kind = BudgetExceededError if problem.type == BUDGET_EXCEEDED else RateLimitError
        return kind(status, problem, request_id, retry_after)
    if status >= 500:
        return InternalServerError(status, problem, request_id)
    return _BY_STATUS.get(status, APIStatusError)(status, problem, request_id)
