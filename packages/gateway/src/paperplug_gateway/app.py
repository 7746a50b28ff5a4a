"""The ASGI app: an OpenAI-compatible `/v1/chat/completions` (plain and streamed, tools and tool
calls), `/v1/models`, `/healthz` and `/metrics`, with the config's guard on every request.

Fail closed: a defense that raises, times out or returns garbage blocks (the guard's own
rule); the client then gets a refusal (`finish_reason: "content_filter"`) or an OpenAI-format
error naming the defense, never the upstream's unchecked text. Keys are compared in constant
time and never logged; the body size, the message count and `max_tokens` are bounded.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from paperplug import Guard, compose
from paperplug_gateway.audit import AuditLog
from paperplug_gateway.config import ConfigError, GatewayConfig
from paperplug_gateway.defenses import build_guard, upstream_chat_model
from paperplug_gateway.metrics import Metrics
from paperplug_gateway.stages import Conversation, Stages, conversation_id
from paperplug_gateway.upstream import HTTPUpstream, UpstreamError


def error(status: int, message: str, kind: str, param: str | None = None) -> JSONResponse:
    """An error in the OpenAI format (what the official SDK raises from)."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": status}}
    return JSONResponse(body, status_code=status)


def _sse(payload: Mapping[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


class Gateway:
    """The app's state: config, guard, upstream, metrics, audit; `app` is the ASGI app."""

    def __init__(
        self, config: GatewayConfig, *, guard: Guard | None = None, upstream: Any = None
    ) -> None:
        self.config = config
        self.metrics = Metrics()
        self.audit = AuditLog(config.audit_path, log_text=config.audit_text)
        self.local_server = None
        url = config.upstream.url
        if guard is None:
            model = (
                upstream_chat_model(config.upstream, url) if url and _needs_model(config) else None
            )
            guard = (
                build_guard(config.defenses, upstream_model=model) if config.defenses else compose()
            )
        if config.upstream.local is not None and upstream is None:
            url = self._serve_local(guard)
        elif "decode" in guard.stages():
            raise ConfigError(
                "a decode-stage defense needs a local upstream (upstream.local): it decodes the model itself"
            )
        self.upstream = upstream or HTTPUpstream(
            url, api_key=config.upstream.api_key, timeout=config.upstream.timeout
        )
        self.stages = Stages(guard, self.audit, self.metrics, config.refusal)
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat_completions, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/healthz", self.healthz, methods=["GET"]),
                Route("/metrics", self.metrics_endpoint, methods=["GET"]),
            ],
            lifespan=self._lifespan,
        )

    def _serve_local(self, guard: Guard) -> str:
        """A local paperplug-llm model, under the decode-stage defenses, on a loopback port."""
        from paperplug.extras import requires_extra

        with requires_extra("paperplug-gateway", "local", "a local upstream model"):
            from paperplug_llm import ChatServer, get_chat_model
        model = get_chat_model(self.config.upstream.local)
        if "decode" in guard.stages():
            verdict = guard.check(model, stage="decode")
            if not verdict.valid:
                raise ConfigError(
                    f"the decode-stage defenses refused the local model: {verdict.reason}"
                )
            model = verdict.payload
        self.local_server = ChatServer(
            model, model_name=self.config.upstream.model or self.config.upstream.local
        ).start()
        return self.local_server.url

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        yield
        await self.upstream.aclose()
        if self.local_server is not None:
            self.local_server.close()

    # -- the door ---------------------------------------------------------------------------
    def client(self, request: Request) -> str | None:
        """The client's label ("local" without keys, else "key<i>"), None when refused. Every
        key is compared in constant time."""
        if not self.config.api_keys:
            return "local"
        header = request.headers.get("authorization", "")
        token = header[7:].strip().encode() if header.lower().startswith("bearer ") else b""
        found = None
        for i, key in enumerate(self.config.api_keys):
            if hmac.compare_digest(token, key.encode()):
                found = i
        return None if found is None else f"key{found}"

    async def _body(self, request: Request) -> bytes | JSONResponse:
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            return error(413, f"the request body is over {limit} bytes", "invalid_request_error")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return error(
                    413, f"the request body is over {limit} bytes", "invalid_request_error"
                )
        return body

    def _validated(self, raw: bytes) -> dict[str, Any] | JSONResponse:
        try:
            body = json.loads(raw)
        except ValueError:
            return error(400, "the request body is not JSON", "invalid_request_error")
        if not isinstance(body, dict):
            return error(400, "the request body must be a JSON object", "invalid_request_error")
        messages = body.get("messages")
        if (
            not isinstance(messages, list)
            or not messages
            or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages)
        ):
            return error(
                400,
                "messages must be a non-empty list of messages with a role",
                "invalid_request_error",
                "messages",
            )
        if len(messages) > self.config.max_messages:
            return error(
                400,
                f"messages holds {len(messages)} messages, over the limit of {self.config.max_messages}",
                "invalid_request_error",
                "messages",
            )
        for key in ("max_tokens", "max_completion_tokens"):
            value = body.get(key)
            if value is None:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not 1 <= value <= self.config.max_tokens
            ):
                return error(
                    400,
                    f"{key} must be an integer in [1, {self.config.max_tokens}], got {value!r}",
                    "invalid_request_error",
                    key,
                )
        if body.get("max_tokens") is None and body.get("max_completion_tokens") is None:
            body["max_tokens"] = self.config.max_tokens
        model = self.config.upstream.model or body.get("model")
        if not isinstance(model, str) or not model:
            return error(400, "model must name a model", "invalid_request_error", "model")
        body["model"] = model
        if "stream" in body and not isinstance(body["stream"], bool):
            return error(400, "stream must be true or false", "invalid_request_error", "stream")
        return body

    # -- endpoints --------------------------------------------------------------------------
    async def chat_completions(self, request: Request) -> Response:
        start = time.perf_counter()
        response = await self._chat(request)
        streamed = isinstance(response, StreamingResponse)
        if not streamed:
            self.metrics.latency.labels("false").observe(time.perf_counter() - start)
        self.metrics.requests.labels("chat", str(response.status_code)).inc()
        return response

    async def _chat(self, request: Request) -> Response:
        client = self.client(request)
        if client is None:
            return error(
                401,
                "a valid API key is required (Authorization: Bearer ...)",
                "authentication_error",
            )
        raw = await self._body(request)
        if isinstance(raw, JSONResponse):
            return raw
        body = self._validated(raw)
        if isinstance(body, JSONResponse):
            return body
        messages = [dict(m) for m in body["messages"]]
        conv = Conversation(
            conversation_id(client, request.headers.get(self.config.conversation_header), messages),
            messages,
            list(body.get("tools") or []),
        )
        refused = await anyio.to_thread.run_sync(self.stages.admit, conv)
        if refused is not None:
            return self._refusal(body, refused)
        upstream_body = {**body, "messages": conv.messages}
        if body.get("stream"):
            return StreamingResponse(
                self._relay(upstream_body, conv, time.perf_counter()),
                media_type="text/event-stream",
            )
        try:
            reply = await self.upstream.complete(upstream_body)
        except UpstreamError as exc:
            self.metrics.upstream_errors.labels(exc.kind).inc()
            return error(exc.status, exc.message, "upstream_error")
        return JSONResponse(await anyio.to_thread.run_sync(self._guard_reply, reply, conv))

    def _guard_reply(self, reply: dict[str, Any], conv: Conversation) -> dict[str, Any]:
        """The upstream's whole reply through the tool (calls) and output stages."""
        choice = reply["choices"][0]
        message = dict(choice["message"])
        finish = choice.get("finish_reason") or "stop"
        notes = []
        if message.get("tool_calls"):
            kept, notes = self.stages.check_calls(message["tool_calls"], conv)
            message["tool_calls"] = kept or None
            if notes:
                finish = "tool_calls" if kept else "content_filter"
        text, stopped = self.stages.check_text(message.get("content") or "", conv)
        if stopped:
            message["tool_calls"], finish = None, "content_filter"
        content = "\n".join(filter(None, [text, *notes]))
        message["content"] = content if content or not message.get("tool_calls") else None
        if message.get("tool_calls") is None:
            message.pop("tool_calls", None)
        return {**reply, "choices": [{**choice, "message": message, "finish_reason": finish}]}

    def _refusal(self, body: Mapping[str, Any], text: str) -> Response:
        """The answer to a refused request: the refusal as the assistant's reply, flagged."""
        meta = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "created": int(time.time()),
            "model": body["model"],
        }
        if body.get("stream"):

            async def events() -> AsyncIterator[str]:
                yield _sse(
                    {
                        **meta,
                        "object": "chat.completion.chunk",
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"role": "assistant", "content": text},
                                "finish_reason": None,
                            }
                        ],
                    }
                )
                yield _sse(
                    {
                        **meta,
                        "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter"}],
                    }
                )
                yield "data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")
        message = {"role": "assistant", "content": text}
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        return JSONResponse(
            {
                **meta,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": "content_filter"}],
                "usage": usage,
            }
        )

    async def _relay(
        self, body: dict[str, Any], conv: Conversation, start: float
    ) -> AsyncIterator[str]:
        """The upstream's stream, checked: text chunks forwarded as the output stage allows,
        tool calls held until complete and checked, a stop ends with the refusal and
        `finish_reason: "content_filter"`; an upstream fault ends with an error event."""
        monitor = self.stages.output_monitor(conv)
        meta: dict[str, Any] = {}
        calls: dict[int, dict[str, Any]] = {}
        finish, usage, emitted = None, None, False

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return _sse({**meta, "object": "chat.completion.chunk", "choices": [choice]})

        try:
            try:
                async for upstream_chunk in self.upstream.stream(body):
                    meta = meta or {k: upstream_chunk.get(k) for k in ("id", "created", "model")}
                    choices = upstream_chunk.get("choices") or []
                    if not choices:
                        usage = upstream_chunk  # stream_options.include_usage: the last chunk
                        continue
                    delta = choices[0].get("delta") or {}
                    finish = choices[0].get("finish_reason") or finish
                    if delta.get("role") and not emitted:
                        yield chunk({"role": delta["role"], "content": ""})
                        emitted = True
                    for call in delta.get("tool_calls") or ():
                        slot = calls.setdefault(
                            call.get("index", 0),
                            {
                                "id": None,
                                "type": "function",
                                "function": {"name": "", "arguments": ""},
                            },
                        )
                        slot["id"] = call.get("id") or slot["id"]
                        function = call.get("function") or {}
                        slot["function"]["name"] += function.get("name") or ""
                        slot["function"]["arguments"] += function.get("arguments") or ""
                    piece = delta.get("content")
                    if not piece:
                        continue
                    if monitor is None:
                        yield chunk({"content": piece})
                        continue
                    t0 = time.perf_counter()
                    shown = await anyio.to_thread.run_sync(monitor.feed, piece)
                    self.metrics.defense_time.labels("output").observe(time.perf_counter() - t0)
                    for text in shown:
                        yield chunk({"content": text})
                    if monitor.stopped_at is not None:
                        break
            except UpstreamError as exc:
                self.metrics.upstream_errors.labels(exc.kind).inc()
                yield _sse(
                    {
                        "error": {
                            "message": exc.message,
                            "type": "upstream_error",
                            "param": None,
                            "code": exc.status,
                        }
                    }
                )
                return
            if monitor is not None and monitor.stopped_at is None:
                shown = await anyio.to_thread.run_sync(monitor.finish)
                for text in shown:
                    yield chunk({"content": text})
            if monitor is not None and monitor.verdict is not None:
                self.stages.note(monitor.verdict, "output", conv, monitor.text)
            if monitor is not None and monitor.stopped_at is not None:
                refusal = self.stages.refusal_text(monitor.verdict)
                yield chunk({"content": ("\n" if monitor.text else "") + refusal}, "content_filter")
                yield "data: [DONE]\n\n"
                return
            if calls:
                ordered = [calls[i] for i in sorted(calls)]
                kept, notes = await anyio.to_thread.run_sync(self.stages.check_calls, ordered, conv)
                if kept:
                    yield chunk({"tool_calls": [{"index": i, **c} for i, c in enumerate(kept)]})
                if notes:
                    yield chunk({"content": "\n".join(notes)})
                    finish = "tool_calls" if kept else "content_filter"
            yield chunk({}, finish or "stop")
            if usage is not None:
                yield _sse(usage)
            yield "data: [DONE]\n\n"
        finally:
            self.metrics.latency.labels("true").observe(time.perf_counter() - start)

    async def models(self, request: Request) -> Response:
        if self.client(request) is None:
            return error(
                401,
                "a valid API key is required (Authorization: Bearer ...)",
                "authentication_error",
            )
        if self.config.upstream.model:
            entry = {
                "id": self.config.upstream.model,
                "object": "model",
                "created": 0,
                "owned_by": "paperplug-gateway",
            }
            return JSONResponse({"object": "list", "data": [entry]})
        try:
            return JSONResponse(await self.upstream.models())
        except UpstreamError as exc:
            self.metrics.upstream_errors.labels(exc.kind).inc()
            return error(exc.status, exc.message, "upstream_error")

    async def healthz(self, request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "defenses": [
                    getattr(d, "name", type(d).__name__) for d in self.stages.guard.defenses
                ],
            }
        )

    async def metrics_endpoint(self, request: Request) -> Response:
        if self.client(request) is None:
            return error(
                401,
                "a valid API key is required (Authorization: Bearer ...)",
                "authentication_error",
            )
        return Response(self.metrics.render(), media_type="text/plain; version=0.0.4")


def _needs_model(config: GatewayConfig) -> bool:
    return any(v == "upstream" for spec in config.defenses for v in spec.params.values())


def create_app(config: GatewayConfig, **kw: Any) -> Starlette:
    """The ASGI app for `config` (`guard=` or `upstream=` replace what the config builds)."""
    return Gateway(config, **kw).app
