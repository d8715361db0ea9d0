"""The optional API token: when set, every route asks for it (pages, API, files, docs, MCP).

A client sends it as `Authorization: Bearer <token>`. A browser cannot put headers on a
`<video>` or `<img>` request, so the page is opened once as `/?token=<token>`: the reply sets
an HttpOnly, same-site cookie, and the page's later requests carry that. Tokens are compared
in constant time.
"""

from __future__ import annotations

import hmac
from http.cookies import SimpleCookie

from starlette.datastructures import MutableHeaders
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "videomem_token"


class TokenGate:
    """ASGI middleware: 401 for any HTTP request without the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        header = conn.headers.get("authorization", "")
        bearer = header[7:] if header[:7].lower() == "bearer " else None
        from_query = conn.query_params.get("token")
        if self._valid(bearer) or self._valid(conn.cookies.get(COOKIE)):
            await self.app(scope, receive, send)
        elif self._valid(from_query):
            await self.app(scope, receive, self._setting_cookie(send))
        else:
            reply = JSONResponse({"detail": "missing or wrong API token"}, status_code=401)
            reply.headers["WWW-Authenticate"] = "Bearer"
            await reply(scope, receive, send)

    def _valid(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def _setting_cookie(self, send: Send) -> Send:
        cookie = SimpleCookie()
        cookie[COOKIE] = self.token
        cookie[COOKIE].update({"httponly": True, "samesite": "Strict", "path": "/"})
        value = cookie[COOKIE].OutputString()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("set-cookie", value)
            await send(message)

        return sending
