"""The gateway's door, in front of every route: the browser checks of `paperplug.door` (a
`Host` the gateway serves, an allowed `Origin`, a JSON `Content-Type`; CORS headers and
preflights for allowed origins only), and errors in OpenAI's format for what the routes refuse
(404 for an unknown path, 405 for a wrong method, 500 without a traceback)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from paperplug.door import Door


def error(
    status: int,
    message: str,
    kind: str,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """An error in the OpenAI format (what the official SDK raises from)."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": status}}
    return JSONResponse(body, status_code=status, headers=headers)


class DoorMiddleware:
    """Refuses what `door` refuses before the app sees it; answers allowed preflights; adds
    CORS headers to the responses to allowed cross-origin requests."""

    def __init__(self, app: ASGIApp, door: Door) -> None:
        self.app, self.door = app, door

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self.door.check(scope["method"], headers)
        if refusal is not None:
            kind = "permission_error" if refusal.status == 403 else "invalid_request_error"
            await error(refusal.status, refusal.message, kind, refusal.param)(scope, receive, send)
            return
        if scope["method"] == "OPTIONS":
            await Response(status_code=204, headers=self.door.preflight_headers(headers))(
                scope, receive, send
            )
            return
        cors = [(k.encode(), v.encode()) for k, v in self.door.cors_headers(headers).items()]
        if not cors:
            await self.app(scope, receive, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *cors]}
            await send(message)

        await self.app(scope, receive, send_with_cors)


async def http_error(request: Request, exc: Any) -> Response:
    """A route's refusal (404, 405) in OpenAI's format."""
    messages = {
        404: f"no route {request.url.path}",
        405: f"{request.method} is not allowed on {request.url.path}",
    }
    status = exc.status_code
    return error(
        status, messages.get(status, str(exc.detail)), "invalid_request_error", None, exc.headers
    )


async def server_error(request: Request, exc: Exception) -> Response:
    """An unexpected failure: a 500 in OpenAI's format, no traceback to the client."""
    return error(500, "the gateway failed on this request; see its log", "server_error")


EXCEPTION_HANDLERS = {HTTPException: http_error, Exception: server_error}
