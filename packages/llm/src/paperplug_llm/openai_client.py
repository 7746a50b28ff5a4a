"""OpenAI-compatible HTTP backend: `/v1/chat/completions`, plain or streamed as SSE.

Works against vLLM, Ollama, llama.cpp's server, OpenAI and `paperplug-llm serve`. Only the
standard library (http.client): one connection per request, a per-socket-operation timeout,
and bounded retries with exponential backoff on connection errors, timeouts, 429 and 5xx.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import time
import urllib.parse
from collections.abc import Generator, Sequence
from typing import Any

from paperplug.checks import check_scalar, check_type
from paperplug_llm.errors import LLMError, LLMHTTPError, LLMResponseError, LLMTimeoutError
from paperplug_llm.messages import Completion, ReplyStream, ToolCall, check_messages, check_tools
from paperplug_llm.tool_calls import read_arguments

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds to wait: delta-seconds ("120", "1.5") or an HTTP date
    ("Wed, 21 Oct 2015 07:28:00 GMT", RFC 9110 §10.2.3); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _tool_calls(raw: Any) -> list[ToolCall]:
    calls = []
    for c in raw or []:
        fn = c.get("function") or {}
        args = fn.get("arguments", "{}")
        if isinstance(args, str):  # unparseable JSON stays a string; the agent loop reports it
            args = read_arguments(args)
        calls.append(ToolCall(name=fn.get("name", ""), arguments=args, id=c.get("id", "")))
    return calls


class OpenAIChatModel:
    """A ChatModel talking to any OpenAI-compatible server.

    Unset arguments come from the environment: `base_url` from OPENAI_BASE_URL (default
    https://api.openai.com/v1; a bare http://host:port gets /v1), `api_key` from
    OPENAI_API_KEY (none sent when unset), `model` from OPENAI_MODEL. `timeout` bounds every
    connect and every read (seconds), so a stalled server raises LLMTimeoutError.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        **defaults: Any,
    ) -> None:
        check_type(model, "model", (str, type(None)))
        check_type(base_url, "base_url", (str, type(None)))
        check_type(api_key, "api_key", (str, type(None)))
        self.model = model or os.environ.get("OPENAI_MODEL")
        if not self.model:
            raise ValueError("model is required (argument or OPENAI_MODEL)")
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        url = urllib.parse.urlsplit(self.base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        self._url = url
        self._path = (url.path or "/v1").rstrip("/") + "/chat/completions"
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout = float(check_scalar(timeout, "timeout", low=0, inclusive="neither"))
        self.max_retries = check_scalar(max_retries, "max_retries", "int", low=0)
        self.backoff = float(check_scalar(backoff, "backoff", low=0))
        self.max_backoff = float(check_scalar(max_backoff, "max_backoff", low=0))
        self.defaults = defaults  # request fields sent every time (temperature, seed, ...)

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, base_url={self.base_url!r})"

    # -- transport -------------------------------------------------------------------------
    def _connect(self) -> http.client.HTTPConnection:
        cls = (
            http.client.HTTPSConnection
            if self._url.scheme == "https"
            else http.client.HTTPConnection
        )
        return cls(self._url.hostname, self._url.port, timeout=self.timeout)

    def _send(self, body: dict[str, Any]) -> tuple[http.client.HTTPConnection, Any]:
        """POST `body`, retrying what is worth retrying; return the open 200 response."""
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        for attempt in range(self.max_retries + 1):
            conn = self._connect()
            wait: float | None = None
            try:
                conn.request("POST", self._path, body=payload, headers=headers)
                resp = conn.getresponse()
            except TimeoutError as exc:
                conn.close()
                error: LLMError = LLMTimeoutError(
                    f"no reply from {self.base_url} within {self.timeout} s"
                )
                error.__cause__ = exc
            except (ConnectionError, OSError, http.client.HTTPException) as exc:
                conn.close()
                error = LLMError(f"cannot reach {self.base_url}: {exc}")
                error.__cause__ = exc
            else:
                if resp.status == 200:
                    return conn, resp
                text = self._read_error(resp)
                conn.close()
                error = LLMHTTPError(resp.status, text)
                if resp.status not in RETRY_STATUSES:
                    raise error
                wait = retry_after_seconds(resp.getheader("Retry-After"))
            if attempt == self.max_retries:
                raise error
            time.sleep(
                min(self.max_backoff, wait if wait is not None else self.backoff * 2**attempt)
            )
        raise AssertionError("unreachable")

    @staticmethod
    def _read_error(resp: Any) -> str:
        try:
            raw = resp.read().decode("utf-8", "replace")
        except (TimeoutError, OSError):
            return resp.reason or ""
        try:
            return json.loads(raw)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            return raw[:300] or (resp.reason or "")

    def _body(self, messages: Sequence[Any], stream: bool, kw: dict[str, Any]) -> dict[str, Any]:
        body = {"model": self.model, "messages": check_messages(messages), **self.defaults, **kw}
        check_tools(body.get("tools"))
        if body.get("tools") is None:
            body.pop("tools", None)
            body.pop("tool_choice", None)
        if stream:
            body["stream"] = True
        return body

    # -- the ChatModel protocol -----------------------------------------------------------
    def complete(self, messages: Sequence[Any], *, stream: bool = False, **kw: Any) -> Completion:
        """One reply with tool calls, finish reason and usage. `kw` are request fields; with
        `stream=True` the reply is received as a stream and assembled (tool calls included)."""
        if check_type(stream, "stream", bool):
            reply = self.stream(messages, **kw)
            for _ in reply:
                pass
            assert reply.completion is not None
            return reply.completion
        conn, resp = self._send(self._body(messages, False, kw))
        try:
            raw = resp.read()
        except TimeoutError as exc:
            raise LLMTimeoutError(
                f"reply from {self.base_url} stalled past {self.timeout} s"
            ) from exc
        finally:
            conn.close()
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise LLMResponseError(
                f"reply from {self.base_url} is not JSON: {raw[:200]!r}"
            ) from exc
        try:
            choice = data["choices"][0]
            message = choice["message"]
            text = message.get("content") or ""
            calls = _tool_calls(message.get("tool_calls"))
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMResponseError(
                f"reply from {self.base_url} lacks choices[0].message: {str(data)[:200]}"
            ) from exc
        if not isinstance(text, str):
            raise LLMResponseError(f"choices[0].message.content is not a string: {text!r}")
        return Completion(
            text=text,
            tool_calls=calls,
            finish_reason=choice.get("finish_reason") or "stop",
            usage=data.get("usage") or {},
        )

    def chat(self, messages: Sequence[Any], **kw: Any) -> str:
        """The reply's text."""
        return self.complete(messages, **kw).text

    def stream(self, messages: Sequence[Any], **kw: Any) -> ReplyStream:
        """The reply's text as it arrives (server-sent events, `data: {...}` lines); after
        iteration `.completion` holds the finish reason, the usage (when the server sends it,
        e.g. with stream_options={"include_usage": True}) and the tool calls, assembled from
        deltas split across events as OpenAI sends them."""
        conn, resp = self._send(self._body(messages, True, kw))
        return ReplyStream(self._events(conn, resp))

    def _events(self, conn: Any, resp: Any) -> Generator[str, None, Completion]:
        text, finish, usage = "", "stop", {}
        calls: dict[int, dict[str, str]] = {}  # index -> id, name, arguments so far
        try:
            while True:
                try:
                    line = resp.readline()
                except TimeoutError as exc:
                    raise LLMTimeoutError(
                        f"stream from {self.base_url} stalled past {self.timeout} s"
                    ) from exc
                if not line:
                    break  # server closed without [DONE]: what came is the reply
                line = line.strip()
                if not line.startswith(b"data:"):
                    continue  # blank separators, comments, `event:` lines
                data = line[5:].strip()
                if data == b"[DONE]":
                    break
                try:
                    event = json.loads(data)
                except ValueError as exc:
                    raise LLMResponseError(f"stream event is not JSON: {data[:200]!r}") from exc
                if isinstance(event, dict) and "error" in event:
                    raise LLMResponseError(f"stream error event: {event['error']}")
                try:
                    usage = event.get("usage") or usage
                    choice = event["choices"][0] if event["choices"] else {}
                    delta = choice.get("delta") or {}
                    finish = choice.get("finish_reason") or finish
                    for part in delta.get("tool_calls") or []:
                        slot = calls.setdefault(
                            int(part.get("index", 0)), {"id": "", "name": "", "arguments": ""}
                        )
                        fn = part.get("function") or {}
                        slot["id"] = part.get("id") or slot["id"]
                        slot["name"] += fn.get("name") or ""
                        slot["arguments"] += fn.get("arguments") or ""
                except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
                    raise LLMResponseError(f"malformed stream event: {data[:200]!r}") from exc
                if delta.get("content"):
                    text += delta["content"]
                    yield delta["content"]
        finally:
            conn.close()
        tool_calls = [
            ToolCall(c["name"], read_arguments(c["arguments"] or "{}"), c["id"])
            for _, c in sorted(calls.items())
        ]
        return Completion(text=text, tool_calls=tool_calls, finish_reason=finish, usage=usage)
