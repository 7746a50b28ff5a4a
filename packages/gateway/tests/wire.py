"""Client-side helpers: the official SDK pointed at a gateway, and a stream read to its end."""

import openai

REPLY = {
    "id": "x",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
}


def client(url, key="none", **kw):
    return openai.OpenAI(base_url=url, api_key=key, max_retries=0, **kw)


def streamed(stream):
    """(text, finish_reason, chunks) of an SDK stream."""
    parts, finish, chunks = [], None, []
    for chunk in stream:
        chunks.append(chunk)
        if chunk.choices:
            parts.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
    return "".join(parts), finish, chunks


def canned_upstream(*, plain=None, events=(), status=200, headers=None, log=None):
    """An upstream that answers every request with `plain` (a JSON body) or, when streamed, the
    raw SSE `events` (strings, each sent as one `data:` event; None stops without [DONE]),
    at `status` with `headers`; `log` (a list) receives every request body and, at the end of
    each stream, how many events were sent and whether the gateway closed it early."""
    import asyncio

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    async def chat(request: Request):
        body = await request.json()
        if log is not None:
            log.append(body)
        if status != 200 or not body.get("stream"):
            return JSONResponse(plain, status_code=status, headers=headers)

        async def stream():
            sent, closed = 0, True
            try:
                for event in events:
                    if event is None:
                        break
                    if isinstance(event, float):
                        await asyncio.sleep(event)
                        continue
                    yield f"data: {event}\n\n"
                    sent += 1
                else:
                    yield "data: [DONE]\n\n"
                closed = False
            finally:
                if log is not None:
                    log.append({"sent": sent, "closed_early": closed})

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def raw_sse(url, body, **headers):
    """(status, raw bytes) of a streamed request read to the end with httpx (no SDK parsing)."""
    import httpx

    with httpx.stream(
        "POST", f"{url}/chat/completions", json=body, headers=headers, timeout=30
    ) as r:
        return r.status_code, r.read()
