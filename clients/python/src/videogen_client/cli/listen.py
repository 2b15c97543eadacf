"""``vg listen``: a receiver on this machine for the account's events — an endpoint registered for it, every
delivery's signatures verified, each event printed (and forwarded, if asked), the endpoint removed on exit."""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from videogen_client._client import Client
from videogen_client.enums import EventType
from videogen_client.webhooks import WebhookVerificationError, unwrap

Emit = Callable[[dict[str, Any]], None]


class _Receiver(ThreadingHTTPServer):
    daemon_threads = True
    secret = ""
    forward_to: str | None = None
    emit: Emit


class _Handler(BaseHTTPRequestHandler):
    server: _Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = dict(self.headers.items())
        try:
            event = unwrap(self.server.secret, headers, body)
        except WebhookVerificationError as exc:
            self.server.emit({"verified": False, "error": str(exc), "webhook_id": headers.get("webhook-id")})
            self._answer(400)
            return
        record: dict[str, Any] = {
            "verified": True,
            "webhook_id": headers.get("webhook-id"),
            "event": event.event,
            "timestamp": event.timestamp.isoformat(),
            "data": event.data,
        }
        status = 200
        if self.server.forward_to:
            status = _forward(self.server.forward_to, headers, body)
            record["forwarded"] = status
        self.server.emit(record)
        self._answer(status)

    def _answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return  # the events are printed instead


def _forward(url: str, headers: dict[str, str], body: bytes) -> int:
    """POST the delivery on, as it came (signatures included); the answer's status, or 502 if none came."""
    keep = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length", "connection")}
    try:
        return httpx.post(url, content=body, headers=keep, timeout=10).status_code
    except httpx.HTTPError:
        return 502


def listen(
    client: Client,
    *,
    events: Sequence[EventType],
    port: int,
    public_url: str | None,
    forward_to: str | None,
    as_json: bool,
) -> int:
    """Serve until SIGINT or SIGTERM; the endpoint is deleted on the way out."""
    receiver = _Receiver(("127.0.0.1", port), _Handler)
    printing = threading.Lock()

    def emit(record: dict[str, Any]) -> None:
        with printing:
            if as_json:
                print(json.dumps(record), flush=True)
            elif record["verified"]:
                data = record["data"]
                about = data.get("id") or data.get("webhook_id") or ""
                status = f" {data['status']}" if "status" in data else ""
                forwarded = f"  -> {record['forwarded']}" if "forwarded" in record else ""
                print(f"{record['timestamp']}  {record['event']}  {about}{status}{forwarded}", flush=True)
            else:
                print(f"refused a delivery: {record['error']}", file=sys.stderr, flush=True)

    receiver.emit = emit
    receiver.forward_to = forward_to
    url = public_url or f"http://127.0.0.1:{receiver.server_address[1]}/"
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    serving = threading.Thread(target=receiver.serve_forever, name="vg-listen", daemon=True)
    serving.start()
    hook = client.webhooks.create(url=url, events=events)
    try:
        receiver.secret = hook.secret
        with printing:
            if as_json:
                print(json.dumps({"listening": url, "endpoint": hook.id, "events": list(events)}), flush=True)
            else:
                print(
                    f"listening on {url} (endpoint {hook.id}) for {', '.join(events)}; Ctrl-C stops",
                    flush=True,
                )
        stop.wait()
    finally:
        client.webhooks.delete(hook.id)
        receiver.shutdown()
        receiver.server_close()
    return 0
