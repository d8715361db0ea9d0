"""Who may reach a server: the address it binds, the Host its requests name and the page a
browser request comes from.

A server on 127.0.0.1 is reachable from every web page its user opens. A page can rename itself
onto 127.0.0.1 (DNS rebinding: the browser then sends the page's own name as `Host`) or send a
request across sites (it then carries the page's `Origin`). So requests must name a trusted host
(`TrustedHostMiddleware`: the loopback names, plus any the operator allows) and a browser request
must come from the server's own origin (`SameOrigin`). Beyond loopback a token is required.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

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
