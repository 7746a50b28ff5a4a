"""A loopback OpenAI-compatible server (`/v1/chat/completions`, `/v1/models`) over any ChatModel.

Standard library only (http.server). It binds to a loopback address only: it exists so the
HTTP client is tested against a real server, and so other tools can use a local model.
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from paperplug_llm.messages import Completion, check_messages

# Request fields handed to the backend (OpenAI names); others (n, logit_bias, ...) are ignored.
FORWARDED = ("max_tokens", "temperature", "top_p", "seed", "stop", "tools", "tool_choice")


def _completion(model: Any, messages: list[dict[str, Any]], kw: dict[str, Any]) -> Completion:
    if callable(getattr(model, "complete", None)):
        return model.complete(messages, **kw)
    return Completion(text=model.chat(messages, **kw))


def _deltas(
    model: Any, messages: list[dict[str, Any]], kw: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """Stream deltas: text pieces as they come; with tools, the whole reply and its calls at once."""
    if kw.get("tools") or not callable(getattr(model, "stream", None)):
        done = _completion(model, messages, kw)
        delta: dict[str, Any] = {"content": done.text}
        if done.tool_calls:
            delta["tool_calls"] = [
                dict(c.to_openai(), index=i) for i, c in enumerate(done.tool_calls)
            ]
        yield delta
        yield {"finish_reason": done.finish_reason}
        return
    for piece in model.stream(messages, **kw):
        yield {"content": piece}
    yield {"finish_reason": "stop"}


class ChatServer:
    """Serve `model` (anything with `chat`, optionally `complete`/`stream`) on 127.0.0.1.

    `port=0` picks a free port; `url` is the base URL to give an OpenAI client. Requests
    are served one at a time (a lock around the model), each on its own thread.
    """

    def __init__(
        self, model: Any, *, host: str = "127.0.0.1", port: int = 0, model_name: str | None = None
    ) -> None:
        if not callable(getattr(model, "chat", None)):
            raise TypeError(f"model must have chat(messages, **kw), got {type(model).__name__}")
        try:
            loopback = ipaddress.ip_address(
                "127.0.0.1" if host == "localhost" else host
            ).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(f"host must be a loopback address (127.0.0.1, ::1), got {host!r}")
        self.model = model
        self.model_name = model_name or getattr(model, "name", None) or type(model).__name__
        self._lock = threading.Lock()
        self._ids = itertools.count()
        handler = type("Handler", (_Handler,), {"server_state": self})
        server_cls = ThreadingHTTPServer
        if ":" in host:
            server_cls = type(
                "V6Server", (ThreadingHTTPServer,), {"address_family": socket.AF_INET6}
            )
        self.httpd = server_cls((host, port), handler)
        self.httpd.daemon_threads = True
        self.host, self.port = host, self.httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def start(self) -> ChatServer:
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (the `paperplug-llm serve` command)."""
        try:
            self.httpd.serve_forever()
        finally:
            self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    server_state: ChatServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests and CLI print their own
        pass

    def _json(self, status: int, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        self._json(status, {"error": {"message": message, "type": kind}})

    def do_GET(self) -> None:
        state = self.server_state
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [{"id": state.model_name, "object": "model", "owned_by": "paperplug"}],
                },
            )
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        state = self.server_state
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            if not isinstance(request, dict):
                raise ValueError("the body must be a JSON object")
            messages = check_messages(request.get("messages"))
        except (ValueError, TypeError) as exc:
            self._error(400, str(exc))
            return
        request.setdefault("max_tokens", request.get("max_completion_tokens"))
        kw = {k: request[k] for k in FORWARDED if request.get(k) is not None}
        ident = f"chatcmpl-{next(state._ids)}"
        head = {
            "id": ident,
            "created": int(time.time()),
            "model": request.get("model") or state.model_name,
        }
        with state._lock:
            try:
                if request.get("stream"):
                    self._stream(head, messages, kw)
                else:
                    self._reply(head, messages, kw)
            except (ValueError, TypeError) as exc:
                self._error(400, str(exc))
            except Exception as exc:  # the model failed: report it as the server's error
                self._error(500, f"{type(exc).__name__}: {exc}", "server_error")

    def _reply(
        self, head: dict[str, Any], messages: list[dict[str, Any]], kw: dict[str, Any]
    ) -> None:
        done = _completion(self.server_state.model, messages, kw)
        message: dict[str, Any] = {"role": "assistant", "content": done.text}
        if done.tool_calls:
            message["tool_calls"] = [c.to_openai() for c in done.tool_calls]
        choice = {"index": 0, "message": message, "finish_reason": done.finish_reason}
        self._json(
            200, {**head, "object": "chat.completion", "choices": [choice], "usage": done.usage}
        )

    def _stream(
        self, head: dict[str, Any], messages: list[dict[str, Any]], kw: dict[str, Any]
    ) -> None:
        deltas = _deltas(self.server_state.model, messages, kw)
        first = next(deltas)  # a failure before the first piece still gets a proper error status
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

        def send(delta: dict[str, Any]) -> None:
            finish = delta.pop("finish_reason", None)
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            event = {**head, "object": "chat.completion.chunk", "choices": [choice]}
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.flush()

        send({"role": "assistant", **first})
        try:
            for delta in deltas:
                send(delta)
        except Exception as exc:  # headers are sent: report the failure as an error event
            error = {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "server_error"}}
            self.wfile.write(b"data: " + json.dumps(error).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
