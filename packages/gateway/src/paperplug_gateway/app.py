"""The ASGI app: an OpenAI-compatible `/v1/chat/completions` (plain and streamed, tools and tool
calls), `/v1/models`, `/healthz` and `/metrics`, with the config's guard on every request.

The door comes first (`door.py`: Host, Origin, Content-Type; then the key, the body's size,
and the request's schema, `request.py`): nothing refused there reaches a defense or the
upstream. Fail closed: a defense that raises, times out or returns garbage blocks (the guard's
own rule); the client then gets a refusal (`finish_reason: "content_filter"`) or an
OpenAI-format error naming the defense, never the upstream's unchecked text. The reply is
rebuilt from the fields the defenses checked (`reply.py`). Keys are compared in constant time
and never logged.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from paperplug import Guard, compose
from paperplug.checks import check_type
from paperplug.door import Door, served_hosts
from paperplug.state import ConversationState, MemoryStore, RedisStore, StateError
from paperplug_gateway.audit import AuditLog
from paperplug_gateway.config import CONFIG_ENV, ConfigError, GatewayConfig, load_config
from paperplug_gateway.defenses import build_guard, upstream_chat_model
from paperplug_gateway.door import EXCEPTION_HANDLERS, DoorMiddleware, error
from paperplug_gateway.metrics import Metrics
from paperplug_gateway.reply import Meta, chunk, completion, parse_chunk, parse_reply, usage_chunk
from paperplug_gateway.request import RequestError, validate_request
from paperplug_gateway.stages import Conversation, Stages, conversation_id
from paperplug_gateway.upstream import HTTPUpstream, UpstreamError

logger = logging.getLogger("paperplug_gateway")


def _sse(payload: Mapping[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


def _error_event(message: str, kind: str, status: int) -> str:
    return _sse({"error": {"message": message, "type": kind, "param": None, "code": status}})


class Gateway:
    """The app's state: config, guard, upstream, metrics, audit; `app` is the ASGI app."""

    def __init__(
        self, config: GatewayConfig, *, guard: Guard | None = None, upstream: Any = None
    ) -> None:
        self.config = check_type(config, "config", GatewayConfig)
        check_type(guard, "guard", (Guard, type(None)), what="a Guard or None")
        if upstream is not None and not all(
            callable(getattr(upstream, m, None)) for m in ("aclose", "models", "complete", "stream")
        ):
            raise TypeError(
                "upstream must be None or have HTTPUpstream's methods (aclose, models, complete, "
                f"stream), got {type(upstream).__name__}"
            )
        self.metrics = Metrics()
        self.audit = AuditLog(config.audit_path, log_text=config.audit_text)
        self.store = (
            RedisStore(config.state_url, ttl=config.state_ttl)
            if config.state_url
            else MemoryStore(config.state_max_items, ttl=config.state_ttl)
        )
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
        door = Door(
            hosts=served_hosts(config.host, config.allowed_hosts),
            origins=config.allowed_origins,
            allow_headers=("authorization", "content-type", config.conversation_header),
        )
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat_completions, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/healthz", self.healthz, methods=["GET"]),
                Route("/metrics", self.metrics_endpoint, methods=["GET"]),
            ],
            middleware=[Middleware(DoorMiddleware, door=door)],
            exception_handlers=EXCEPTION_HANDLERS,
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
        async for piece in request.stream():
            body += piece
            if len(body) > limit:
                return error(
                    413, f"the request body is over {limit} bytes", "invalid_request_error"
                )
        return body

    def _validated(self, raw: bytes) -> dict[str, Any] | JSONResponse:
        """The request to forward (`request.validate_request`), or its 400."""
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            return error(400, "the request body is not JSON", "invalid_request_error")
        try:
            return validate_request(
                body,
                max_messages=self.config.max_messages,
                max_tokens=self.config.max_tokens,
                model=self.config.upstream.model,
            )
        except RequestError as exc:
            return error(400, exc.message, "invalid_request_error", exc.param)

    def _upstream_error(self, exc: UpstreamError) -> JSONResponse:
        self.metrics.upstream_errors.labels(exc.kind).inc()
        headers = {"retry-after": exc.retry_after} if exc.retry_after else None
        return error(exc.status, exc.message, "upstream_error", headers=headers)

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
        key = conversation_id(
            client, request.headers.get(self.config.conversation_header), messages
        )
        conv = Conversation(
            key,
            messages,
            list(body.get("tools") or []),
            ConversationState.for_request(self.store, key, messages),
        )
        try:
            refused = await anyio.to_thread.run_sync(self.stages.admit, conv)
        except StateError as exc:
            return _state_error(exc)
        if refused is not None:
            return self._refusal(body, refused)
        upstream_body = {**body, "messages": conv.messages}
        if body.get("stream"):
            chunks = self.upstream.stream(upstream_body)
            try:  # the upstream's first chunk before our headers: its 429 stays a 429
                raw = await anext(chunks)
                first = (raw, parse_chunk(raw))
            except StopAsyncIteration:
                first = None
            except UpstreamError as exc:
                await chunks.aclose()
                return self._upstream_error(exc)
            return StreamingResponse(
                self._relay(first, chunks, body, conv, time.perf_counter()),
                media_type="text/event-stream",
            )
        try:
            reply = parse_reply(await self.upstream.complete(upstream_body), body["model"])
        except UpstreamError as exc:
            return self._upstream_error(exc)
        try:
            return JSONResponse(await anyio.to_thread.run_sync(self._guard_reply, reply, conv))
        except StateError as exc:
            return _state_error(exc)

    def _guard_reply(self, reply: Any, conv: Conversation) -> dict[str, Any]:
        """The upstream's whole reply through the tool (calls) and output stages, rebuilt
        from what they checked."""
        finish, kept, notes = reply.finish, [], []
        if reply.calls:
            kept, notes = self.stages.check_calls(reply.calls, conv)
            if notes:
                finish = "tool_calls" if kept else "content_filter"
        text, stopped = self.stages.check_text(reply.content, conv)
        if stopped:
            kept, finish = [], "content_filter"
        content = "\n".join(filter(None, [text, *notes]))
        out = completion(
            reply.meta, content if content or not kept else None, kept, finish, reply.usage
        )
        conv.state.persist(out["choices"][0]["message"])
        return out

    def _refusal(self, body: Mapping[str, Any], text: str) -> Response:
        """The answer to a refused request: the refusal as the assistant's reply, flagged."""
        meta = Meta(model=body["model"])
        if body.get("stream"):

            async def events() -> AsyncIterator[str]:
                yield _sse(chunk(meta, {"role": "assistant", "content": text}))
                yield _sse(chunk(meta, {}, "content_filter"))
                yield "data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        return JSONResponse(completion(meta, text, [], "content_filter", usage))

    async def _relay(
        self,
        first: Any,
        chunks: AsyncIterator[dict[str, Any]],
        body: Mapping[str, Any],
        conv: Conversation,
        start: float,
    ) -> AsyncIterator[str]:
        """The checked stream (`_events`); whatever fails mid-stream, the upstream or the
        gateway itself (an audit write), ends it with an error event, never a torn connection."""
        try:
            async for event in self._events(first, chunks, body, conv):
                yield event
        except UpstreamError as exc:
            self.metrics.upstream_errors.labels(exc.kind).inc()
            yield _error_event(exc.message, "upstream_error", exc.status)
        except StateError as exc:
            yield _error_event(_state_message(exc), "state_error", 503)
        except Exception:
            logger.exception("a streamed reply failed in the gateway")
            yield _error_event(
                "the gateway failed mid-stream; the reply was cut", "server_error", 500
            )
        finally:
            self.metrics.latency.labels("true").observe(time.perf_counter() - start)

    async def _events(
        self,
        first: Any,
        chunks: AsyncIterator[dict[str, Any]],
        body: Mapping[str, Any],
        conv: Conversation,
    ) -> AsyncIterator[str]:
        """The upstream's stream, checked: text chunks forwarded as the output stage allows,
        tool calls held until complete and checked, a stop ends with the refusal and
        `finish_reason: "content_filter"`. The upstream's stream is closed as soon as this
        stops reading it (a stop, an error, a client gone)."""
        monitor = self.stages.output_monitor(conv)
        meta: Meta | None = None
        calls: dict[int, dict[str, Any]] = {}
        finish, usage, emitted, said = None, None, False, []

        def say(text: str, finish_reason: str | None = None) -> str:
            """A content chunk, remembered: the reply the client assembles is the state's key."""
            said.append(text)
            return _sse(chunk(meta, {"content": text}, finish_reason))

        async def parsed() -> AsyncIterator[tuple[dict[str, Any], Any]]:
            if first is not None:
                yield first
            async for raw in chunks:
                yield raw, parse_chunk(raw)

        async with contextlib.aclosing(chunks):
            async for raw, delta in parsed():
                if meta is None:
                    meta = Meta.of(raw, body["model"])
                usage = delta.usage or usage
                finish = delta.finish or finish
                if delta.role and not emitted:
                    yield _sse(chunk(meta, {"role": "assistant", "content": ""}))
                    emitted = True
                for call in delta.calls:
                    slot = calls.setdefault(
                        call.get("index", 0),
                        {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                    )
                    slot["id"] = call.get("id") or slot["id"]
                    function = call.get("function") or {}
                    slot["function"]["name"] += function.get("name") or ""
                    slot["function"]["arguments"] += function.get("arguments") or ""
                if not delta.content:
                    continue
                if monitor is None:
                    yield say(delta.content)
                    continue
                t0 = time.perf_counter()
                shown = await anyio.to_thread.run_sync(monitor.feed, delta.content)
                self.metrics.defense_time.labels("output").observe(time.perf_counter() - t0)
                for text in shown:
                    yield say(text)
                if monitor.stopped_at is not None:
                    break
        meta = meta or Meta(model=body["model"])
        if monitor is not None and monitor.stopped_at is None:
            for text in await anyio.to_thread.run_sync(monitor.finish):
                yield say(text)
        if monitor is not None and monitor.verdict is not None:
            self.stages.note(monitor.verdict, "output", conv, monitor.text)
        if monitor is not None and monitor.stopped_at is not None:
            refusal = self.stages.refusal_text(monitor.verdict)
            stop = say(("\n" if monitor.text else "") + refusal, "content_filter")
            await anyio.to_thread.run_sync(conv.state.persist, _assistant(said, []))
            yield stop
            yield "data: [DONE]\n\n"
            return
        kept: list[dict[str, Any]] = []
        if calls:
            ordered = [
                {**calls[i], "id": calls[i]["id"] or f"call_{uuid.uuid4().hex[:16]}"}
                for i in sorted(calls)
            ]
            kept, notes = await anyio.to_thread.run_sync(self.stages.check_calls, ordered, conv)
            if kept:
                yield _sse(
                    chunk(meta, {"tool_calls": [{"index": i, **c} for i, c in enumerate(kept)]})
                )
            if notes:
                yield say("\n".join(notes))
                finish = "tool_calls" if kept else "content_filter"
        await anyio.to_thread.run_sync(conv.state.persist, _assistant(said, kept))
        yield _sse(chunk(meta, {}, finish or "stop"))
        if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
            yield _sse(usage_chunk(meta, usage))
        yield "data: [DONE]\n\n"

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
            return self._upstream_error(exc)

    async def healthz(self, request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "pid": os.getpid(),  # which worker answered (serve --workers N)
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


def _assistant(said: list[str], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message a client assembles from a streamed reply."""
    return {"role": "assistant", "content": "".join(said) or None, "tool_calls": calls}


def _state_message(exc: StateError) -> str:
    return f"the conversation state store failed, so the request is refused: {exc}"


def _state_error(exc: StateError) -> JSONResponse:
    """A state store that fails fails the request closed: 503, the SDK retries it."""
    return error(503, _state_message(exc), "state_error")


def _needs_model(config: GatewayConfig) -> bool:
    return any(v == "upstream" for spec in config.defenses for v in spec.params.values())


def app_from_env() -> Starlette:
    """The app of one worker process: the config at $PAPERPLUG_GATEWAY_CONFIG (what
    `paperplug-gateway serve --workers N` hands uvicorn as its factory)."""
    return Gateway(load_config(os.environ[CONFIG_ENV])).app


def create_app(config: GatewayConfig, **kw: Any) -> Starlette:
    """The ASGI app for `config` (`guard=` or `upstream=` replace what the config builds)."""
    return Gateway(config, **kw).app
