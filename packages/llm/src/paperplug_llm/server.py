"""A loopback OpenAI-compatible server (`/v1/chat/completions`, `/v1/models`) over any ChatModel.

Standard library only (http.server). It binds to a loopback address only: it exists so the
HTTP client is tested against a real server, and so other tools (the `openai` SDK, AgentDojo)
can use a local model. Requests are validated the way OpenAI does: an option the server
cannot honour is a 400 naming it, never silently ignored. The model serves one request at a
time, in arrival order (a FIFO queue); each connection has its own thread.
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from paperplug.door import Door
from paperplug_llm.messages import (
    Completion,
    ReplyStream,
    check_messages,
    check_tool_choice,
    check_tools,
)

# Request fields handed to the backend (OpenAI names).
FORWARDED = ("max_tokens", "temperature", "top_p", "seed", "stop", "tools", "tool_choice")
# Fields accepted without effect on a single-model local server.
NO_EFFECT = ("user", "metadata", "store", "service_tier", "parallel_tool_calls")
# Fields checked by `parse_request` (accepted when their value is one the server honours).
CHECKED = (
    "model", "messages", "stream", "stream_options", "max_completion_tokens", "n", "logprobs",
    "top_logprobs", "response_format", "frequency_penalty", "presence_penalty", "logit_bias",
)  # fmt: skip
DISCONNECTED = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)
ARGUMENT_PIECE = 16  # characters of a tool call's arguments per streamed delta, as OpenAI splits


def check_loopback(host: str) -> str:
    """`host` if it is a loopback address (127.0.0.0/8, ::1, localhost), else ValueError."""
    try:
        loopback = ipaddress.ip_address("127.0.0.1" if host == "localhost" else host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"host must be a loopback address (127.0.0.1, ::1), got {host!r}")
    return host


def parse_request(request: Any) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """(messages, backend keywords, server options) of a chat-completions request body.

    Raises ValueError/TypeError (a 400) for a malformed request or an option this server does
    not honour: n > 1, top_logprobs, a response_format other than text, non-zero penalties, a
    logit_bias, logprobs while streaming, or an unknown field."""
    if not isinstance(request, dict):
        raise TypeError("the body must be a JSON object")
    unknown = sorted(set(request) - {*FORWARDED, *NO_EFFECT, *CHECKED})
    if unknown:
        raise ValueError(f"unsupported parameter(s) {unknown}")
    if not isinstance(request.get("model", ""), str):
        raise TypeError("model must be a string")
    messages = check_messages(request.get("messages"))
    stream = request.get("stream") or False
    if not isinstance(stream, bool):
        raise TypeError("stream must be a boolean")
    options = request.get("stream_options")
    if options is not None:
        if not stream:
            raise ValueError("stream_options is only allowed when stream is true")
        if not isinstance(options, Mapping) or set(options) - {"include_usage"}:
            raise ValueError("stream_options supports {'include_usage': bool} only")
    if request.get("n") not in (None, 1):
        raise ValueError(f"n={request['n']!r} is not supported: one choice per request")
    logprobs = request.get("logprobs") or False
    if not isinstance(logprobs, bool):
        raise TypeError("logprobs must be a boolean")
    if request.get("top_logprobs") not in (None, 0):
        raise ValueError("top_logprobs is not supported (logprobs of the chosen tokens are)")
    if logprobs and stream:
        raise ValueError("logprobs is not supported while streaming")
    fmt = request.get("response_format")
    if fmt is not None and (not isinstance(fmt, Mapping) or fmt.get("type") != "text"):
        raise ValueError("response_format other than {'type': 'text'} is not supported")
    for penalty in ("frequency_penalty", "presence_penalty"):
        if request.get(penalty) not in (None, 0, 0.0):
            raise ValueError(f"{penalty} is not supported (only 0)")
    if request.get("logit_bias"):
        raise ValueError("logit_bias is not supported")
    kw = {k: request[k] for k in FORWARDED if request.get(k) is not None}
    limit = request.get("max_completion_tokens")
    if limit is not None:
        kw.setdefault("max_tokens", limit)
    if "max_tokens" in kw and (
        isinstance(kw["max_tokens"], bool)
        or not isinstance(kw["max_tokens"], int)
        or kw["max_tokens"] < 1
    ):
        raise ValueError(f"max_tokens must be a positive integer, got {kw['max_tokens']!r}")
    for name, low, high in (("temperature", 0.0, 2.0), ("top_p", 0.0, 1.0)):
        value = kw.get(name)
        if value is not None and (not isinstance(value, (int, float)) or not low <= value <= high):
            raise ValueError(f"{name} must be a number in [{low}, {high}], got {value!r}")
    stop = kw.get("stop")
    if stop is not None and not (
        isinstance(stop, str) or (isinstance(stop, list) and all(isinstance(x, str) for x in stop))
    ):
        raise TypeError("stop must be a string or a list of strings")
    tools = check_tools(kw.get("tools"))
    check_tool_choice(kw.get("tool_choice"), tools)
    server = {
        "stream": stream,
        "include_usage": bool((options or {}).get("include_usage")),
        "logprobs": logprobs,
    }
    return messages, kw, server


class FifoLock:
    """A lock granted in arrival order (threading.Lock makes no such promise)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next_ticket = 0
        self._serving = 0

    @property
    def waiting(self) -> int:
        """Requests queued or being served."""
        return self._next_ticket - self._serving

    def __enter__(self) -> FifoLock:
        with self._cond:
            ticket = self._next_ticket
            self._next_ticket += 1
            self._cond.wait_for(lambda: self._serving == ticket)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._serving += 1
            self._cond.notify_all()


def _reply_stream(model: Any, messages: list[dict[str, Any]], kw: dict[str, Any]) -> Any:
    """Text pieces of the reply; `.completion` afterwards where the backend reports one."""
    if callable(getattr(model, "stream", None)) and not kw.get("tools"):
        return model.stream(messages, **kw)
    done = _completion(model, messages, kw)

    def whole() -> Iterator[str]:
        if done.text:
            yield done.text
        return done

    return ReplyStream(whole())


def _completion(model: Any, messages: list[dict[str, Any]], kw: dict[str, Any]) -> Completion:
    if callable(getattr(model, "complete", None)):
        reply = model.complete(messages, **kw)
        return Completion(text=reply) if isinstance(reply, str) else reply
    return Completion(text=model.chat(messages, **kw))


def _logprobs_field(done: Completion) -> dict[str, Any]:
    if done.logprobs is None or done.tokens is None:
        raise ValueError("this model does not report log-probabilities; drop logprobs")
    return {
        "content": [
            {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []}
            for t, lp in zip(done.tokens, done.logprobs, strict=True)
        ]
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away is not the server's error: nothing on stderr."""
        import sys

        if isinstance(sys.exc_info()[1], DISCONNECTED):
            return
        super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


class ChatServer:
    """Serve `model` (anything with `chat`, optionally `complete`/`stream`) on 127.0.0.1.

    `port=0` picks a free port; `url` is the base URL to give an OpenAI client. Each
    connection gets a thread; the model serves one request at a time in arrival order. The
    door (`paperplug.door`) refuses what a web page could make a browser send: a POST not
    declared JSON, an origin outside `allowed_origins`, a `Host` that is not loopback.
    """

    def __init__(
        self,
        model: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model_name: str | None = None,
        allowed_origins: tuple[str, ...] = (),
    ) -> None:
        if not callable(getattr(model, "chat", None)):
            raise TypeError(f"model must have chat(messages, **kw), got {type(model).__name__}")
        check_loopback(host)
        self.door = Door(origins=tuple(allowed_origins))
        self.model = model
        self.model_name = model_name or getattr(model, "name", None) or type(model).__name__
        self.created = int(time.time())
        self.queue = FifoLock()
        self._ids = itertools.count()
        handler = type("Handler", (_Handler,), {"server_state": self})
        self.httpd = (_Server6 if ":" in host else _Server)((host, port), handler)
        self.host, self.port = host, self.httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def model_entry(self) -> dict[str, Any]:
        return {
            "id": self.model_name,
            "object": "model",
            "created": self.created,
            "owned_by": "paperplug",
        }

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
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests and CLI print their own
        pass

    def _json(self, status: int, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self) -> None:
        for name, value in self.server_state.door.cors_headers(self.headers).items():
            self.send_header(name, value)
        super().end_headers()

    def _refused(self) -> bool:
        """Answer a request the door refuses (see `paperplug.door`); True when it did."""
        refusal = self.server_state.door.check(self.command, self.headers)
        if refusal is None:
            return False
        kind = "permission_error" if refusal.status == 403 else "invalid_request_error"
        self._error(refusal.status, refusal.message, kind, param=refusal.param)
        self.close_connection = True
        return True

    def _error(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
    ) -> None:
        self._json(
            status, {"error": {"message": message, "type": kind, "param": param, "code": code}}
        )

    def do_OPTIONS(self) -> None:
        """A CORS preflight: answered for an allowed origin only."""
        if self._refused():
            return
        self.send_response(204)
        for name, value in self.server_state.door.preflight_headers(self.headers).items():
            if not name.startswith(("access-control-allow-origin", "vary")):  # end_headers adds
                self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        state = self.server_state
        if self._refused():
            return
        path = self.path.split("?")[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            self._json(200, {"object": "list", "data": [state.model_entry()]})
        elif path.startswith(("/v1/models/", "/models/")):
            wanted = path.split("/models/", 1)[1]
            if wanted == state.model_name:
                self._json(200, state.model_entry())
            else:
                self._error(404, f"the model {wanted!r} does not exist", code="model_not_found")
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        state = self.server_state
        if self._refused():
            return
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        try:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = json.loads(raw)
        except ValueError as exc:
            self._error(400, f"the body is not JSON: {exc}")
            return
        try:
            messages, kw, options = parse_request(request)
        except (ValueError, TypeError) as exc:
            self._error(400, str(exc))
            return
        head = {
            "id": f"chatcmpl-{next(state._ids)}",
            "created": int(time.time()),
            "model": request.get("model") or state.model_name,
            "system_fingerprint": None,
        }
        with state.queue:
            try:
                if options["stream"]:
                    self._stream(head, messages, kw, options)
                else:
                    self._reply(head, messages, kw, options)
            except DISCONNECTED:
                self.close_connection = True
            except (ValueError, TypeError) as exc:
                self._error(400, str(exc))
            except Exception as exc:  # the model failed: report it as the server's error
                self._error(500, f"{type(exc).__name__}: {exc}", "server_error")

    def _reply(
        self,
        head: dict[str, Any],
        messages: list[dict[str, Any]],
        kw: dict[str, Any],
        options: dict[str, Any],
    ) -> None:
        done = _completion(self.server_state.model, messages, kw)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": done.text if done.text or not done.tool_calls else None,
            "refusal": None,
        }
        if done.tool_calls:
            message["tool_calls"] = [c.to_openai() for c in done.tool_calls]
        choice = {
            "index": 0,
            "message": message,
            "logprobs": _logprobs_field(done) if options["logprobs"] else None,
            "finish_reason": done.finish_reason,
        }
        body = {**head, "object": "chat.completion", "choices": [choice]}
        if done.usage:
            body["usage"] = done.usage
        self._json(200, body)

    def _stream(
        self,
        head: dict[str, Any],
        messages: list[dict[str, Any]],
        kw: dict[str, Any],
        options: dict[str, Any],
    ) -> None:
        reply = _reply_stream(self.server_state.model, messages, kw)
        pieces = iter(reply)
        first = next(pieces, None)  # a failure before the first piece still gets its status
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        usage_field = {"usage": None} if options["include_usage"] else {}

        def send(delta: dict[str, Any], finish: str | None = None) -> None:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            event = {**head, "object": "chat.completion.chunk", "choices": [choice], **usage_field}
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.flush()

        try:
            send({"role": "assistant", "content": first or ""})
            for piece in pieces:
                send({"content": piece})
            done = getattr(reply, "completion", None) or Completion(text="")
            for i, call in enumerate(done.tool_calls):
                entry = call.to_openai()
                args = entry["function"]["arguments"]
                send({"tool_calls": [{"index": i, "id": entry["id"] or f"call_{i}", "type": "function",
                                      "function": {"name": call.name, "arguments": ""}}]})  # fmt: skip
                for start in range(0, len(args), ARGUMENT_PIECE):
                    piece = args[start : start + ARGUMENT_PIECE]
                    send({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
            send({}, done.finish_reason)
            if options["include_usage"]:
                event = {
                    **head,
                    "object": "chat.completion.chunk",
                    "choices": [],
                    "usage": done.usage or None,
                }
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        except DISCONNECTED:
            close = getattr(reply, "close", None)
            if callable(close):
                close()  # stop decoding for a reader that went away
            return
        except Exception as exc:  # headers are sent: report the failure as an error event
            error = {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "server_error"}}
            self.wfile.write(b"data: " + json.dumps(error).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
