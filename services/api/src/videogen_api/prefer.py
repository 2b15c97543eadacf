"""What a client asks of a generation's timing, in headers. ``Prefer`` (RFC 7240), as far as the api honours
it: ``wait=N``, the seconds a client will wait for a generation to finish before the answer comes (at most
``MAX_WAIT_SECONDS``); a preference the api does not know, or a malformed one, is ignored, as the RFC asks,
and the answer's ``Preference-Applied`` says what was honoured. ``Cancel-After``: the client's deadline."""

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


CANCEL_AFTER = "Cancel-After"
_UNITS = {"s": 1, "m": 60, "h": 3600}


def cancel_after(value: str | None) -> int | None:
    """The ``Cancel-After`` header (as Replicate takes it): a duration such as ``90``, ``90s``, ``5m`` or
    ``1h``, in seconds; None when absent. Raises ValueError for anything else."""
    if value is None:
        return None
    text = value.strip().lower()
    unit = _UNITS.get(text[-1:]) if text else None
    number = text[:-1] if unit is not None else text
    if not (number.isascii() and number.isdigit()) or int(number) == 0:
        raise ValueError("must be a positive duration such as 90, 90s, 5m or 1h")
    return int(number) * (unit or 1)


def applied(seconds: int) -> dict[str, str]:
    return {PREFERENCE_APPLIED: f"wait={seconds}"}
