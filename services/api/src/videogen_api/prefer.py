"""The ``Prefer`` request header (RFC 7240) as far as the api honours it: ``wait=N``, the seconds a client
will wait for a generation to finish before the answer comes (at most ``MAX_WAIT_SECONDS``). A preference the
api does not know, or a malformed one, is ignored, as the RFC asks; the answer's ``Preference-Applied`` says
what was honoured."""

from __future__ import annotations

PREFER = "Prefer"
PREFERENCE_APPLIED = "Preference-Applied"
MAX_WAIT_SECONDS = 60


def preferred_wait(values: list[str]) -> int | None:
    """The ``wait`` preference of every ``Prefer`` header given, capped at ``MAX_WAIT_SECONDS``; None if none
    (the first one wins, as RFC 7240 has it)."""
    for header in values:
        for preference in header.split(","):
            name, _, rest = preference.strip().partition("=")
            if name.strip().lower() != "wait":
                continue
            value = rest.split(";", 1)[0].strip().strip('"')
            if value.isascii() and value.isdigit():
                return min(int(value), MAX_WAIT_SECONDS)
            return None
    return None


def applied(seconds: int) -> dict[str, str]:
    return {PREFERENCE_APPLIED: f"wait={seconds}"}
