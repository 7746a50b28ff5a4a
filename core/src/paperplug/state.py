"""One home for the state a defense keeps across a conversation's requests (DRIFT's plan,
privileges and history): a small key-value store interface, an in-process default (bounded,
with a TTL) and Redis for replicas, and the view a check receives in `context["state"]`.

State is keyed by the conversation's history, not only by its id: a request's messages are
hashed prefix by prefix, a check reads the value stored under the longest prefix that has
one, and its writes go under the whole request's messages. So two runs of one task at once
(the same opening messages) each continue from their own history and never reset each
other; a replayed or edited history continues from where that history was. Values are JSON
(never pickle). A view buffers its writes; whoever ran the check commits them only when the
check answered in time, so a check abandoned at its deadline never writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable


class StateError(RuntimeError):
    """The state store failed (unreachable, a value that is not JSON): the request fails closed."""


@runtime_checkable
class StateStore(Protocol):
    """Where state lives: string keys, JSON text values, each with a time to live."""

    def get_many(self, keys: Sequence[str]) -> list[str | None]: ...

    def set(self, key: str, value: str) -> None: ...


class MemoryStore:
    """The in-process store: at most `max_items` keys (least recently used go first), each
    kept `ttl` seconds after its last write. Thread-safe."""

    def __init__(self, max_items: int = 10_000, ttl: float = 3600.0) -> None:
        if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 1:
            raise ValueError(f"max_items must be a positive integer, got {max_items!r}")
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        self.max_items, self.ttl = max_items, float(ttl)
        self._items: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        """Characters of JSON held (what the state costs in memory, short of Python's overhead)."""
        with self._lock:
            return sum(len(value) for _, value in self._items.values())

    def get_many(self, keys: Sequence[str]) -> list[str | None]:
        now = time.monotonic()
        out: list[str | None] = []
        with self._lock:
            for key in keys:
                item = self._items.get(key)
                if item is not None and item[0] < now:
                    del self._items[key]
                    item = None
                if item is not None:
                    self._items.move_to_end(key)
                out.append(None if item is None else item[1])
        return out

    def set(self, key: str, value: str) -> None:
        with self._lock:
            self._items[key] = (time.monotonic() + self.ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)


class RedisStore:
    """State in Redis (`redis://host:port/db`), shared by every replica and worker: one MGET
    per read, SET with an expiry per write, keys under `prefix`. Any Redis failure is a
    StateError. Needs the `redis` package (`pip install paperplug[redis]`)."""

    def __init__(
        self, url: str, *, ttl: float = 3600.0, prefix: str = "paperplug:", timeout: float = 2.0
    ) -> None:
        from paperplug.extras import requires_extra

        with requires_extra("paperplug", "redis", "the Redis state store"):
            import redis
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"url must be a redis:// URL, got {url!r}")
        self.url, self.ttl, self.prefix = url, int(max(1, ttl)), prefix
        self._errors = (redis.RedisError, OSError)
        self._client = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
        )

    def _fail(self, exc: Exception) -> StateError:
        return StateError(f"the state store at {self.url} failed: {type(exc).__name__}: {exc}")

    def get_many(self, keys: Sequence[str]) -> list[str | None]:
        if not keys:
            return []
        try:
            return list(self._client.mget([self.prefix + k for k in keys]))
        except self._errors as exc:
            raise self._fail(exc) from None

    def set(self, key: str, value: str) -> None:
        try:
            self._client.set(self.prefix + key, value, ex=self.ttl)
        except self._errors as exc:
            raise self._fail(exc) from None


def _canonical(message: Mapping[str, Any]) -> list[Any]:
    """What identifies a message in a history: its role, its text, its tool calls (id, name,
    arguments as parsed JSON) and the call it answers; so a client's re-serialisation of the
    same turn (`refusal: null`, a list of text parts, other JSON spacing) keeps its key."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        function = function if isinstance(function, Mapping) else {}
        arguments = function.get("arguments")
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        calls.append(
            [call.get("id") if isinstance(call, Mapping) else None, function.get("name"), arguments]
        )
    return [message.get("role"), content or "", calls, message.get("tool_call_id")]


def history_keys(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """A digest of each prefix of `messages`, shortest first (see `_canonical`)."""
    digest, keys = hashlib.sha256(), []
    for message in messages:
        canonical = _canonical(message)
        digest.update(json.dumps(canonical, sort_keys=True, default=str).encode() + b"\n")
        keys.append(digest.copy().hexdigest()[:32])
    return keys


class ConversationState:
    """The state view of one check in one conversation. `get(name)` reads the latest value of
    `name` along the history (this view's own write first), `set(name, value)` buffers a
    JSON value, `commit()` keeps what was set, `abandon()` drops it for good (a check past
    its deadline).

    Alone (a defense's own view, in process), it reads every prefix of its history and
    commits into the store under the whole history. Made by `for_request` (a server's
    request), its views read the store at the history's proper prefixes, commit into the
    request, and `persist(reply)` writes the request's state under the history extended by
    the reply the client receives: the key its next request reads, and one that a retry or a
    second run of the same request, whose reply differs, never shares."""

    def __init__(
        self,
        store: StateStore,
        scope: str,
        keys: Sequence[str],
        *,
        request: dict[str, str] | None = None,
        messages: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        if not keys:
            raise ValueError("keys must hold at least one history key")
        self.store, self.scope, self.keys = store, scope, list(keys)
        self.request, self.messages = request, list(messages)
        self._pending: dict[str, str] = {}
        self._abandoned = False

    @classmethod
    def for_request(
        cls, store: StateStore, scope: str, messages: Sequence[Mapping[str, Any]]
    ) -> ConversationState:
        """The base view of one request with these messages."""
        return cls(store, scope, history_keys(messages), request={}, messages=messages)

    def scoped(self, scope: str) -> ConversationState:
        """A fresh view of the same history and request under a narrower scope (a defense's)."""
        return ConversationState(
            self.store,
            f"{self.scope}:{scope}",
            self.keys,
            request=self.request,
            messages=self.messages,
        )

    def get(self, name: str) -> Any:
        """The latest value of `name` along this history, or None."""
        found = self._pending.get(name)
        if found is None and self.request is not None:
            found = self.request.get(f"{self.scope}:{name}")
        if found is None:
            keys = self.keys[:-1] if self.request is not None else self.keys
            values = self.store.get_many([f"{self.scope}:{name}:{k}" for k in reversed(keys)])
            found = next((v for v in values if v is not None), None)
        return None if found is None else json.loads(found)

    def set(self, name: str, value: Any) -> None:
        """Buffer `value` (JSON) as the state of `name` after this history (dropped once the
        view was abandoned)."""
        if self._abandoned:
            return
        try:
            self._pending[name] = json.dumps(value, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise StateError(f"state {name!r} must be JSON: {exc}") from None

    def commit(self) -> None:
        """Keep what was set (nothing once abandoned)."""
        if self._abandoned:
            return
        pending, self._pending = self._pending, {}
        for name, value in pending.items():
            if self.request is not None:
                self.request[f"{self.scope}:{name}"] = value
            else:
                self.store.set(f"{self.scope}:{name}:{self.keys[-1]}", value)

    def abandon(self) -> None:
        """Never keep what this view was given, now or later."""
        self._abandoned = True
        self._pending = {}

    def persist(self, reply: Mapping[str, Any]) -> None:
        """Write the request's state under its history extended by `reply` (the assistant
        message the client receives)."""
        if self.request is None:
            raise ValueError("persist needs a request's view (ConversationState.for_request)")
        after = history_keys([*self.messages, reply])[-1]
        for name, value in self.request.items():
            self.store.set(f"{name}:{after}", value)
