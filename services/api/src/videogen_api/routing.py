"""Routing at creation (POST /v1/generate): which providers a request may go to, in what order and why
(``videogen_common.routing.order`` over the providers' states), where it goes first, and what that costs.

A request naming one provider, without fallbacks or a sort, is checked as it always was (``plain``): its
provider must be enabled and able to make what is asked. A routed one (``"auto"``, ``fallback_providers``,
``routing``) has as candidates the providers it names (its provider, then its fallbacks; with ``"auto"``,
its fallbacks, or else every provider) that are enabled and can make it; the others are skipped, each with
why, and a request no provider can make is a 422 naming why for each.

Models (``videogen_common.catalogue``): each candidate is a (provider, model) pair, one model per provider. A
``provider:model`` fallback names its own; any other candidate is asked for the request's ``model`` if it
names one (a candidate that does not serve it is skipped: a named model is never swapped for another), else
for its provider's default (the model the orchestrator's pools say the deployment uses, else the
catalogue's default). A named model is held to its durations; a default one makes the nearest duration it
can, as before models could be named."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from videogen_api.problems import Problem, invalid
from videogen_api.provider_states import Snapshot
from videogen_api.schemas.generation_inputs import AUTO_PROVIDER, fallback_parts
from videogen_api.schemas.generations import GenerateRequest
from videogen_common.capabilities import unsupported
from videogen_common.catalogue import Catalogue, refusals
from videogen_common.domain import Provider
from videogen_common.pricing import PriceTable
from videogen_common.routing import Candidate, order

Doc = dict[str, Any]


@dataclass(frozen=True)
class Routed:
    """Where a new generation goes first, the model asked of it there, its route (None for a plain request)
    and its estimated cost."""

    provider: Provider
    route: Doc | None
    estimated_cost: float | None
    model: str | None = None


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


def _asked(body: GenerateRequest) -> list[tuple[Provider, str | None, str]]:
    """The providers the request names, each with the model named for it (a ``provider:model`` fallback's,
    else the request's ``model``; None: its default) and the field that names it."""
    fallbacks = []
    for i, choice in enumerate(body.fallback_providers or []):
        provider, model = fallback_parts(choice)
        fallbacks.append((provider, model or body.model, f"fallback_providers.{i}"))
    if body.provider == AUTO_PROVIDER:
        return fallbacks or [(p, body.model, "provider") for p in Provider]
    return [(Provider(body.provider), body.model, "provider"), *fallbacks]


def _refused(
    provider: Provider,
    *,
    model: str | None,
    field: str,
    body: GenerateRequest,
    snapshot: Snapshot,
    catalogue: Catalogue,
) -> tuple[str | None, list[dict[str, str]]]:
    """The model a candidate is asked for (the named one, else its default), and why it cannot make the
    request ([]: it can), as field errors naming the model and its limits."""
    named = model is not None
    chosen = model if model is not None else snapshot.model_of(provider.value)
    spec = catalogue.get(provider.value, chosen)
    if spec is None:
        if named:
            known = ", ".join(m.id for m in catalogue.of(provider.value)) or "none"
            message = f"{provider.value} has no model {chosen!r}; its models: {known}"
            return chosen, [
                {
                    "field": "model" if field == "provider" else field,
                    "message": message,
                    "code": "unknown_model",
                }
            ]
        # The deployment's default model is not catalogued: held to the provider's capabilities, as before.
        return chosen, unsupported(provider, body.options())
    return chosen, refusals(spec, body.options(), body.duration, named=named)


def route(
    body: GenerateRequest,
    enabled: frozenset[Provider],
    snapshot: Snapshot,
    prices: PriceTable,
    catalogue: Catalogue,
) -> Routed:
    """The candidates of a routed request in order, why each is where it is and why others were skipped;
    422 validation-error if there is none."""
    candidates: list[Provider] = []
    models: dict[str, str | None] = {}
    skipped: list[Candidate] = []
    errors: list[dict[str, str]] = []
    for provider, model, field in _asked(body):
        chosen: str | None = model
        if provider not in enabled:
            reason = "not enabled on this deployment"
            errors.append(
                {"field": field, "message": f"{provider.value}: {reason}", "code": "provider_unavailable"}
            )
        else:
            chosen, refusals_ = _refused(
                provider, model=model, field=field, body=body, snapshot=snapshot, catalogue=catalogue
            )
            if not refusals_:
                candidates.append(provider)
                models[provider.value] = chosen
                continue
            reason = "; ".join(refusal["message"] for refusal in refusals_)
            errors.extend(
                {"field": r["field"], "message": f"{provider.value}: {r['message']}", "code": r["code"]}
                if r["code"] == "unknown_model"
                else {
                    "field": field,
                    "message": f"{provider.value}: {r['field']}: {r['message']}",
                    "code": r["code"],
                }
                for r in refusals_
            )
        skipped.append(Candidate(provider.value, reason, chosen))
    if not candidates:
        raise invalid(errors)
    resolution = body.resolution.value if body.resolution is not None else None
    states = {
        p.value: snapshot.state(
            p.value, snapshot.estimate(prices, p.value, resolution, body.duration, models[p.value])
        )
        for p in candidates
    }
    sort = body.routing.sort if body.routing is not None else None
    auto = body.provider == AUTO_PROVIDER
    ordered = [
        replace(c, model=models[c.provider])
        for c in order([p.value for p in candidates], states, auto=auto, sort=sort if auto else None)
    ]
    first = ordered[0]
    doc: Doc = {
        "requested": str(body.provider.value if isinstance(body.provider, Provider) else body.provider),
        "sort": sort.value if sort is not None else None,
        "fallback_on_failure": bool(body.fallback_on_failure),
        "candidates": [c.to_doc() for c in ordered],
        "skipped": [c.to_doc() for c in skipped],
        "reason": f"{first.provider} first: {first.reason}",
    }
    return Routed(Provider(first.provider), doc, states[first.provider].price, first.model)


def plain(
    body: GenerateRequest,
    enabled: frozenset[Provider],
    snapshot: Snapshot,
    prices: PriceTable,
    catalogue: Catalogue,
) -> Routed:
    """A request for one provider, checked as before routing existed (and against its model)."""
    provider = Provider(body.provider)
    if provider not in enabled:
        raise provider_unavailable(provider.value, enabled)
    model, errors = _refused(
        provider, model=body.model, field="provider", body=body, snapshot=snapshot, catalogue=catalogue
    )
    if errors:
        raise invalid(errors)
    resolution = body.resolution.value if body.resolution is not None else None
    estimate = snapshot.estimate(prices, provider.value, resolution, body.duration, model)
    return Routed(provider, None, estimate, model)


def routed(
    body: GenerateRequest,
    enabled: frozenset[Provider],
    snapshot: Snapshot,
    prices: PriceTable,
    catalogue: Catalogue,
) -> Routed:
    """Where a new generation goes: ``route`` for a routed request, ``plain`` otherwise."""
    return (route if body.routed else plain)(body, enabled, snapshot, prices, catalogue)
