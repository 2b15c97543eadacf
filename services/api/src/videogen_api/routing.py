"""Routing at creation (POST /v1/generate): which providers a request may go to, in what order and why
(``videogen_common.routing.order`` over the providers' states), where it goes first, and what that costs.

A request naming one provider, without fallbacks or a sort, is checked as it always was (``plain``): its
provider must be enabled and able to make what is asked. A routed one (``"auto"``, ``fallback_providers``,
``routing``) has as candidates the providers it names (its provider, then its fallbacks; with ``"auto"``,
its fallbacks, or else every provider) that are enabled and can make it; the others are skipped, each with
why, and a request no provider can make is a 422 naming why for each."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from videogen_api.problems import Problem, invalid
from videogen_api.provider_states import Snapshot
from videogen_api.schemas.generations import AUTO_PROVIDER, GenerateRequest
from videogen_common.capabilities import unsupported
from videogen_common.domain import Provider
from videogen_common.pricing import PriceTable
from videogen_common.routing import Candidate, order

Doc = dict[str, Any]


@dataclass(frozen=True)
class Routed:
    """Where a new generation goes first, its route (None for a plain request) and its estimated cost."""

    provider: Provider
    route: Doc | None
    estimated_cost: float | None


def provider_unavailable(provider: str, enabled: Collection[Provider]) -> Problem:
    """422: a provider the API knows but this deployment does not offer (no credentials for it)."""
    offered = ", ".join(sorted(p.value for p in enabled))
    message = f"provider {provider!r} is not enabled on this deployment; enabled: {offered}"
    return Problem(
        422,
        "provider-unavailable",
        "Provider not available",
        message,
        errors=[{"field": "provider", "message": message, "code": "provider_unavailable"}],
    )


def _asked(body: GenerateRequest) -> list[tuple[Provider, str]]:
    """The providers the request names, each with the field that names it."""
    fallbacks = [(p, f"fallback_providers.{i}") for i, p in enumerate(body.fallback_providers or [])]
    if body.provider == AUTO_PROVIDER:
        return fallbacks or [(p, "provider") for p in Provider]
    return [(Provider(body.provider), "provider"), *fallbacks]


def route(
    body: GenerateRequest, enabled: frozenset[Provider], snapshot: Snapshot, prices: PriceTable
) -> Routed:
    """The candidates of a routed request in order, why each is where it is and why others were skipped;
    422 validation-error if there is none."""
    options = body.options()
    candidates: list[Provider] = []
    skipped: list[Candidate] = []
    errors: list[dict[str, str]] = []
    for provider, field in _asked(body):
        if provider not in enabled:
            reason = "not enabled on this deployment"
            errors.append(
                {"field": field, "message": f"{provider.value}: {reason}", "code": "provider_unavailable"}
            )
        elif refusals := unsupported(provider, options):
            reason = "; ".join(refusal["message"] for refusal in refusals)
            errors.extend(
                {
                    "field": field,
                    "message": f"{provider.value}: {r['field']}: {r['message']}",
                    "code": r["code"],
                }
                for r in refusals
            )
        else:
            candidates.append(provider)
            continue
        skipped.append(Candidate(provider.value, reason))
    if not candidates:
        raise invalid(errors)
    resolution = body.resolution.value if body.resolution is not None else None
    states = {
        p.value: snapshot.state(p.value, snapshot.estimate(prices, p.value, resolution, body.duration))
        for p in candidates
    }
    sort = body.routing.sort if body.routing is not None else None
    auto = body.provider == AUTO_PROVIDER
    ordered = order([p.value for p in candidates], states, auto=auto, sort=sort if auto else None)
    first = ordered[0]
    doc: Doc = {
        "requested": str(body.provider.value if isinstance(body.provider, Provider) else body.provider),
        "sort": sort.value if sort is not None else None,
        "fallback_on_failure": bool(body.fallback_on_failure),
        "candidates": [c.to_doc() for c in ordered],
        "skipped": [c.to_doc() for c in skipped],
        "reason": f"{first.provider} first: {first.reason}",
    }
    return Routed(Provider(first.provider), doc, states[first.provider].price)


def plain(
    body: GenerateRequest, enabled: frozenset[Provider], snapshot: Snapshot, prices: PriceTable
) -> Routed:
    """A request for one provider, checked as before routing existed."""
    provider = Provider(body.provider)
    if provider not in enabled:
        raise provider_unavailable(provider.value, enabled)
    if errors := unsupported(provider, body.options()):
        raise invalid(errors)
    resolution = body.resolution.value if body.resolution is not None else None
    return Routed(provider, None, snapshot.estimate(prices, provider.value, resolution, body.duration))


def routed(
    body: GenerateRequest, enabled: frozenset[Provider], snapshot: Snapshot, prices: PriceTable
) -> Routed:
    """Where a new generation goes: ``route`` for a routed request, ``plain`` otherwise."""
    return (route if body.routed else plain)(body, enabled, snapshot, prices)
