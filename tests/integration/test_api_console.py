"""The console's files on the live application: served under /console without a key, each answer (a 404
included) with the strict Content-Security-Policy and the other protective headers, revalidated by ETag; the
API calls it makes still need one."""

from __future__ import annotations

from aiohttp import web
from aiohttp.test_utils import TestClient

from tests.support.api import bearer

Client = TestClient[web.Request, web.Application]
POLICY = {
    "default-src": "'none'",
    "script-src": "'self'",
    "style-src": "'self'",
    "connect-src": "'self'",
    "frame-ancestors": "'none'",
    "base-uri": "'none'",
    "form-action": "'none'",
    "object-src": "'none'",
}


def directives(header: str) -> dict[str, str]:
    parts = (d.strip().split(" ", 1) for d in header.split(";") if d.strip())
    return {p[0]: p[1] if len(p) > 1 else "" for p in parts}


def assert_protected(headers: dict[str, str]) -> None:
    policy = directives(headers["Content-Security-Policy"])
    for name, value in POLICY.items():
        assert policy[name] == value, (name, policy)
    for name in ("img-src", "media-src"):  # the signed media links, and nothing inline or from a CDN
        assert policy[name].startswith("'self'") and "'unsafe-inline'" not in policy[name]
    assert "unsafe" not in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["X-Frame-Options"] == "DENY"


async def test_the_console_is_served_without_a_key_with_a_strict_policy(client: Client) -> None:
    for path in ("/console", "/console/"):
        response = await client.get(path)
        assert response.status == 200
        assert response.content_type == "text/html"
        assert_protected(dict(response.headers))
        assert '<script type="module" src="/console/js/app.js"></script>' in await response.text()
    for path, kind in (("/console/js/app.js", "text/javascript"), ("/console/console.css", "text/css")):
        response = await client.get(path)
        assert response.status == 200 and response.content_type == kind, path
        assert_protected(dict(response.headers))
        etag = response.headers["ETag"]
        assert response.headers["Cache-Control"] == "no-cache"
        again = await client.get(path, headers={"If-None-Match": etag})
        assert again.status == 304 and await again.read() == b""
    missing = await client.get("/console/js/nothing.js")
    assert missing.status == 404
    assert_protected(dict(missing.headers))
    # Only the console's answers carry its policy.
    assert "Content-Security-Policy" not in (await client.get("/healthz")).headers


async def test_the_calls_the_console_makes_still_need_a_key(client: Client, key: str) -> None:
    assert (await client.get("/v1/generations")).status == 401
    assert (await client.get("/v1/webhooks", headers=bearer("vg_wrong"))).status == 401
    assert (await client.get("/v1/generations", headers=bearer(key))).status == 200
    assert (await client.get("/v1/webhooks", headers=bearer(key))).status == 200
    # The API reference the console builds its forms from is public.
    assert (await client.get("/openapi.json")).status == 200
