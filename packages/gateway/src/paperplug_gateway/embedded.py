"""The embedded default's parts, shared by demo.py, bench/run.py and the tests: a scripted
OpenAI-compatible upstream (replies from a function, streamed word by word, with faults on
demand: a stall, a dropped connection mid-stream, malformed events, 429 and 500) and a
regex-level defense, registered at run time like a user's plugin."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from paperplug import Verdict
from paperplug.checks import check_context

FAULTS = (
    "stall",
    "stall_mid",
    "drop",
    "malformed",
    "no_done",
    "status_429",
    "status_500",
    "not_json",
)
Reply = dict[str, Any]  # {"content": str, "tool_calls": [{"name": ..., "arguments": {...}}]}


def echo_reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
    """The default script: the last user message, repeated back."""
    users = [m for m in messages if m.get("role") == "user"]
    return {"content": f"You said: {users[-1]['content'] if users else ''}"}


def scripted_upstream(
    reply: Callable[[list[dict[str, Any]], list[dict[str, Any]]], Reply] = echo_reply,
    *,
    fault: Callable[[], str | None] = lambda: None,
    chunk_delay: float = 0.0,
    model: str = "scripted",
) -> Starlette:
    """An OpenAI-compatible app that answers with `reply(messages, tools)`; `fault()` returns
    the fault of the next request (one of FAULTS) or None. Streams one word per chunk, `chunk_delay`
    seconds apart (a model's decoding time)."""

    async def chat(request: Request) -> Response:
        body = await request.json()
        kind = fault()
        if kind == "status_429":
            return JSONResponse(
                {"error": {"message": "slow down", "type": "rate_limit"}}, status_code=429
            )
        if kind == "status_500":
            return JSONResponse(
                {"error": {"message": "boom", "type": "server_error"}}, status_code=500
            )
        if kind == "not_json":
            return Response("<html>oops</html>", media_type="text/html")
        if kind == "stall":
            await asyncio.sleep(3600)
        answer = reply(body["messages"], body.get("tools") or [])
        meta = {
            "id": f"chatcmpl-{time.monotonic_ns()}",
            "created": int(time.time()),
            "model": body.get("model", model),
        }
        calls = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for i, c in enumerate(answer.get("tool_calls") or [])
        ]
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message = {"role": "assistant", "content": answer.get("content") or None}
            if calls:
                message["tool_calls"] = calls
            usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            return JSONResponse(
                {
                    **meta,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                }
            )

        async def events() -> AsyncIterator[str]:
            def event(delta: Mapping[str, Any], reason: str | None = None) -> str:
                payload = {
                    **meta,
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
                }
                return f"data: {json.dumps(payload)}\n\n"

            yield event({"role": "assistant", "content": ""})
            words = re.findall(r"\S+\s*|\s+", answer.get("content") or "")
            for i, word in enumerate(words):
                if chunk_delay:
                    await asyncio.sleep(chunk_delay)
                if i == 1 and kind == "stall_mid":
                    await asyncio.sleep(3600)
                if i == 1 and kind == "drop":
                    raise ConnectionResetError("the scripted upstream drops the connection")
                if i == 1 and kind == "malformed":
                    yield "data: {this is not json\n\n"
                    return
                yield event({"content": word})
            for i, call in enumerate(calls):
                yield event({"tool_calls": [{"index": i, **call}]})
            yield event({}, finish)
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = {
                    "prompt_tokens": 1,
                    "completion_tokens": len(words),
                    "total_tokens": 1 + len(words),
                }
                yield f"data: {json.dumps({**meta, 'object': 'chat.completion.chunk', 'choices': [], 'usage': usage})}\n\n"
            if kind != "no_done":
                yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": model, "object": "model", "created": 0, "owned_by": "scripted"}],
            }
        )

    return Starlette(
        routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/models", models)]
    )


class RegexGuard:
    """A regex-level output defense: blocks a reply once it matches `pattern` (the kind of
    guardrail LiteLLM's proxy and the benchmark run on both sides)."""

    stage = "output"
    name = "regex-guard"

    def __init__(self, pattern: str = r"(?i)\bpassword\b", stage: str = "output") -> None:
        self.pattern, self.stage = re.compile(pattern), stage

    def check(self, payload: Any, context: Mapping[str, Any] | None = None) -> Verdict:
        check_context(context)
        text = payload if isinstance(payload, str) else json.dumps(payload, default=str)
        found = self.pattern.search(text)
        reason = f"matched {found.group(0)!r}" if found else ""
        return Verdict(payload, found is None, float(found is not None), reason=reason)


def register_regex_guard() -> None:
    """Register RegexGuard as the defense "regex-guard" at run time (a user's plugin)."""
    import paperplug

    paperplug.register_component(
        "defense",
        "regex-guard",
        summary="blocks text matching a regex",
        paper="(paperplug-gateway's example plugin)",
    )(RegexGuard)
