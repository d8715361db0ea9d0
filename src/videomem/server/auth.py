"""The optional API token: when set, every route asks for it (pages, API, files, docs, MCP).

A client sends it as `Authorization: Bearer <token>`. A browser cannot put headers on a
`<video>` or `<img>` request, so the page is opened once as `/?token=<token>`: that login
answers with a redirect to `/` and an HttpOnly, same-site cookie, and the page's later requests
carry that. The query form works at `/` only, and the token is cut out of every request's query
string before the app or the access log sees it. The cookie holds a digest of the token, not
the token. Tokens are any UTF-8 text, compared as bytes in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from http.cookies import SimpleCookie
from urllib.parse import unquote_to_bytes

from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

COOKIE = "videomem_token"
LOGIN = "/"
"""The one path where `?token=` is taken."""


def _taken_from_query(scope: Scope) -> bytes | None:
    """The `token` query parameter's value (percent-decoded bytes), removed from the request's
    query string; None when there is none."""
    kept, found = [], None
    for part in scope.get("query_string", b"").split(b"&"):
        if part.startswith(b"token="):
            found = unquote_to_bytes(part[6:].replace(b"+", b" "))
        elif part:
            kept.append(part)
    if found is not None:
        scope["query_string"] = b"&".join(kept)
    return found


def _bearer(scope: Scope) -> bytes | None:
    """The raw bytes of an `Authorization: Bearer` header (headers are bytes on the wire; a
    UTF-8 token arrives as its UTF-8 bytes)."""
    for name, value in scope["headers"]:
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return value[7:].strip()
    return None


class TokenGate:
    """ASGI middleware: 401 for any HTTP request without the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode("utf-8")
        self.cookie = hashlib.sha256(b"videomem-session:" + self.token).hexdigest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from_query = _taken_from_query(scope)
        cookie = HTTPConnection(scope).cookies.get(COOKIE)
        if self._valid(_bearer(scope)) or (cookie is not None and hmac.compare_digest(cookie, self.cookie)):
            await self.app(scope, receive, send)
        elif scope["path"] == LOGIN and self._valid(from_query):
            await self._login()(scope, receive, send)
        else:
            reply = JSONResponse({"detail": "missing or wrong API token"}, status_code=401)
            reply.headers["WWW-Authenticate"] = "Bearer"
            await reply(scope, receive, send)

    def _valid(self, given: bytes | None) -> bool:
        return given is not None and hmac.compare_digest(given, self.token)

    def _login(self) -> RedirectResponse:
        """To the page without the token in its address, with the cookie set."""
        cookie = SimpleCookie()
        cookie[COOKIE] = self.cookie
        cookie[COOKIE].update({"httponly": True, "samesite": "Strict", "path": "/"})
        reply = RedirectResponse(LOGIN, status_code=303)
        reply.headers.append("set-cookie", cookie[COOKIE].OutputString())
        return reply
