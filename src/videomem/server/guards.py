"""Who may reach a server: the address it binds, the Host its requests name and the page a
browser request comes from.

A server on 127.0.0.1 is reachable from every web page its user opens. A page can rename itself
onto 127.0.0.1 (DNS rebinding: the browser then sends the page's own name as `Host`) or send a
request across sites (it then carries the page's `Origin`). So requests must name a trusted host
(`TrustedHostMiddleware`: the loopback names, plus any the operator allows) and a browser request
must come from the server's own origin (`SameOrigin`). Beyond loopback a token is required.
Request bodies are bounded (`BodyLimit`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from videomem.errors import VideomemError

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""Host names of this machine as `Host` headers carry them (an IPv6 literal in brackets)."""


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token: anyone who reaches the port could
    read every video and frame, and start ingests."""
    if not is_loopback(host) and not token:
        raise VideomemError(
            f"--host {host} serves beyond this machine: give an API token too (--token or VIDEOMEM_TOKEN)"
        )


def trusted_hosts(bind: str, allowed: Sequence[str] = ()) -> list[str]:
    """The `Host` names requests may carry: the loopback names and `allowed`. A server bound
    beyond loopback (which has a token) takes any name unless `allowed` lists them."""
    if not allowed and not is_loopback(bind):
        return ["*"]
    return [*LOOPBACK_HOSTS, *allowed]


class SameOrigin:
    """ASGI middleware: 403 for a request whose `Origin` is not the server's own (a browser
    sends one with every cross-site request; clients that send none are let through)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if origin is not None and urlsplit(origin).netloc.lower() != headers.get("host", "").lower():
                await JSONResponse({"detail": "cross-site request refused"}, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


MAX_BODY_BYTES = 1 << 20
"""Largest request body taken: a question, a tool call or an ingest request is a few kilobytes."""


class BodyLimit:
    """ASGI middleware: 413 for a request body over `limit` bytes. The body is read before the
    app runs (a declared length is checked before reading), so an app never starts on a body it
    would have to drop half-way."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "0")
        if not declared.isdigit() or int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        chunks, size, message = [], 0, {"more_body": True}
        while message.get("more_body", False):
            message = await receive()
            if message["type"] != "http.request":  # the client left
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
        body = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replay() -> Message:
            return body.pop() if body else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        reply = JSONResponse({"detail": f"request body over {self.limit} bytes"}, status_code=413)
        await reply(scope, receive, send)
