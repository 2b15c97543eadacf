"""Liveness, readiness and metrics (outside /v1, unauthenticated)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from videogen_api import state
from videogen_api.metrics import METRICS
from videogen_api.serialize import json_response
from videogen_common.probes import all_ok, metrics_answer, run_checks, store_check

routes = web.RouteTableDef()

BROKER_DEGRADED = "degraded: the last publish failed; creation still succeeds and the reconciler dispatches"


async def readiness(app: web.Application) -> tuple[bool, dict[str, Any]]:
    """Whether this instance should be sent traffic, and the body ``/readyz`` answers with.

    Gated on the store only. The broker is reported but does not gate: creation is durable in MongoDB before
    the publish, and the orchestrator's reconciler dispatches any request whose message was lost, so the api
    keeps its promises while the broker is down. Failing readiness with the broker would take every api
    instance out of the Service at once, turning a degraded fast path into a full outage. (Start-up does need
    the broker: the producer must connect before the api serves.)"""
    if app[state.DRAIN].draining:  # shutting down: still serving, but take no new traffic
        return False, {"status": "draining"}
    checks = await run_checks({"store": store_check(app[state.STORE])})
    ready = all_ok(checks)
    checks["broker"] = "ok" if app[state.PUBLISHER].connected() else BROKER_DEGRADED
    return ready, {"status": "ok" if ready else "unavailable", "checks": checks}


@routes.get("/healthz")
async def healthz(_: web.Request) -> web.Response:
    return json_response({"status": "ok"})


@routes.get("/readyz")
async def readyz(request: web.Request) -> web.Response:
    ready, body = await readiness(request.app)
    return json_response(body, status=200 if ready else 503)


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    return await metrics_answer(request.app[METRICS].registry)
