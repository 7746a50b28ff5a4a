"""The upstream: an OpenAI-compatible server reached with httpx (async, streaming). Every fault
becomes an `UpstreamError` with the status the client gets: a refused or dropped connection
502, a stall past the timeout 504, the upstream's own 4xx/429 passed on, its 5xx as 502, a
reply or stream that is not the OpenAI format 502 (`reply.py` reads their fields). A 429's
`Retry-After` travels with it, since the official SDK's back-off reads it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from paperplug.checks import check_scalar, check_type


class UpstreamError(Exception):
    """The upstream failed; `status` is what the client receives, `kind` labels the metric."""

    def __init__(
        self, status: int, message: str, kind: str, *, retry_after: str | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind
        self.retry_after = retry_after


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
        return str(body.get("error", {}).get("message") or body)[:500]
    except (ValueError, AttributeError):
        return response.text[:500]


class HTTPUpstream:
    """`POST {url}/chat/completions` and `GET {url}/models`, with one timeout for connecting
    and for every read (a stalled stream ends with 504, not a hang)."""

    def __init__(self, url: str, *, api_key: str | None = None, timeout: float = 60.0) -> None:
        check_type(url, "url", str, what="an http(s) URL")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http(s) URL, got {url!r}"[:200])
        check_type(api_key, "api_key", (str, type(None)), what="a string or None")
        check_scalar(timeout, "timeout", "real", low=0.0, inclusive="neither")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.url = url
        self.client = httpx.AsyncClient(
            base_url=url,
            headers=headers,
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(max_connections=256, max_keepalive_connections=64),
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def _send(
        self, method: str, path: str, body: Any = None, *, stream: bool = False
    ) -> httpx.Response:
        """The upstream's response (its body still unread when `stream`); a refused or failed
        connection or a timeout is an UpstreamError."""
        request = self.client.build_request(method, path, json=body)
        try:
            return await self.client.send(request, stream=stream)
        except httpx.TimeoutException:
            raise UpstreamError(504, "the upstream did not answer in time", "timeout") from None
        except httpx.TransportError as exc:
            raise UpstreamError(
                502, f"the upstream could not be reached: {exc}", "connection"
            ) from None

    @staticmethod
    def _raise_for(response: httpx.Response) -> None:
        if response.status_code == 200:
            return
        status = response.status_code if response.status_code < 500 else 502
        kind = "rate_limit" if response.status_code == 429 else f"http_{response.status_code}"
        retry_after = response.headers.get("retry-after")
        raise UpstreamError(
            status,
            f"upstream answered {response.status_code}: {_error_text(response)}",
            kind,
            retry_after=retry_after[:64] if retry_after and status == 429 else None,
        )

    async def models(self) -> dict[str, Any]:
        response = await self._send("GET", "/models")
        self._raise_for(response)
        return response.json()

    async def complete(self, body: Mapping[str, Any]) -> Any:
        """The upstream's chat completion (non-streamed), parsed JSON."""
        response = await self._send("POST", "/chat/completions", dict(body, stream=False))
        self._raise_for(response)
        try:
            return response.json()
        except ValueError:
            raise UpstreamError(502, "the upstream's reply is not JSON", "malformed") from None

    async def stream(self, body: Mapping[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The upstream's chunks, parsed from its server-sent events, until `[DONE]`."""
        response = await self._send(
            "POST", "/chat/completions", dict(body, stream=True), stream=True
        )
        try:
            if response.status_code != 200:
                await response.aread()
                self._raise_for(response)
            done = False
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue  # comments, event names, blank separators
                data = line[5:].strip()
                if data == "[DONE]":
                    done = True
                    break
                try:
                    chunk = json.loads(data)
                except ValueError:
                    raise UpstreamError(
                        502, "the upstream sent a malformed event", "malformed"
                    ) from None
                if not isinstance(chunk, dict):
                    raise UpstreamError(502, "the upstream sent a malformed event", "malformed")
                if "error" in chunk:
                    raise UpstreamError(
                        502, f"the upstream failed mid-stream: {chunk['error']}", "stream_error"
                    )
                yield chunk
            if not done:
                raise UpstreamError(502, "the upstream closed the stream before [DONE]", "dropped")
        except httpx.TimeoutException:
            raise UpstreamError(504, "the upstream stalled mid-stream", "timeout") from None
        except httpx.TransportError as exc:
            raise UpstreamError(502, f"the upstream dropped the stream: {exc}", "dropped") from None
        finally:
            await response.aclose()
