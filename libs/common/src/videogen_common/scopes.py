"""What an API key may do: the one table of scopes. Every authenticated route declares the scope it needs
(``videogen_api.declare.Endpoint(scope=...)``); the api refuses a key without it (403 insufficient-scope)
before the handler runs. ``:write`` holds the ``:read`` of the same resource, as Stripe's restricted keys
do: a key that may make generations may also read them back.

Keys made before scopes existed, and keys made by ``videogen keys create``, hold every scope (stored as
none: ``None`` means all)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum


class Scope(StrEnum):
    GENERATIONS_READ = "generations:read"
    GENERATIONS_WRITE = "generations:write"
    WEBHOOKS_READ = "webhooks:read"
    WEBHOOKS_WRITE = "webhooks:write"
    EVENTS_READ = "events:read"
    USAGE_READ = "usage:read"
    BUDGETS_WRITE = "budgets:write"
    AUDIT_READ = "audit:read"
    KEYS_READ = "keys:read"
    KEYS_WRITE = "keys:write"


# The table: each scope, what it allows, and the scopes it holds besides itself. docs/api.md repeats it (a
# test holds the two together).
SCOPES: Mapping[Scope, tuple[str, frozenset[Scope]]] = {
    Scope.GENERATIONS_READ: (
        "Read generations, follow their events, list the providers.",
        frozenset(),
    ),
    Scope.GENERATIONS_WRITE: (
        "Make generations (and uploads for their first frames), cancel and delete them, delete uploads.",
        frozenset({Scope.GENERATIONS_READ}),
    ),
    Scope.WEBHOOKS_READ: ("Read webhook endpoints and their deliveries.", frozenset()),
    Scope.WEBHOOKS_WRITE: (
        "Register, change and delete endpoints, rotate their secrets, send tests, retry and recover "
        "deliveries.",
        frozenset({Scope.WEBHOOKS_READ}),
    ),
    Scope.EVENTS_READ: (
        "Read the account's events: what its webhooks deliver, the generations' data included.",
        frozenset(),
    ),
    Scope.USAGE_READ: ("Read usage and the account's budgets with what is left of them.", frozenset()),
    Scope.BUDGETS_WRITE: ("Set the account's budgets.", frozenset({Scope.USAGE_READ})),
    Scope.AUDIT_READ: ("Read the audit trail.", frozenset()),
    Scope.KEYS_READ: ("List and read the account's API keys (never their secrets).", frozenset()),
    Scope.KEYS_WRITE: (
        "Make, change and revoke API keys, each holding at most the scopes and budgets of the key that "
        "makes or changes it.",
        frozenset({Scope.KEYS_READ}),
    ),
}

ALL_SCOPES: frozenset[Scope] = frozenset(Scope)


def describe(scope: Scope) -> str:
    return SCOPES[scope][0]


def granted(scopes: Iterable[str] | None) -> frozenset[Scope]:
    """Every scope a key holding ``scopes`` has: those it names, and what they hold. ``None`` (a key stored
    without scopes: made before they existed, or by an operator) holds all. Unknown names hold nothing."""
    if scopes is None:
        return ALL_SCOPES
    named = {Scope(s) for s in scopes if s in Scope._value2member_map_}
    return frozenset(named.union(*(SCOPES[s][1] for s in named)))


def canonical(scopes: Iterable[Scope]) -> list[str]:
    """``scopes`` in the table's order, each once."""
    given = set(scopes)
    return [s.value for s in Scope if s in given]
