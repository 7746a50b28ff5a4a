"""Client-side helpers: the official SDK pointed at a gateway, and a stream read to its end."""

import openai


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
