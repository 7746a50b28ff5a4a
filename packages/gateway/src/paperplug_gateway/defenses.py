"""The guard the config names: each `[[defense]]` loaded from the registry (a built-in method or
a user's plugin, by the same name), in stage order, each under its own time limit.

A defense that does not answer in time raises inside the guard, which fails closed: the
verdict is invalid and names it. Its worker thread cannot be stopped and finishes in the
background; the request does not wait for it, and whatever state it writes is dropped: each
check gets its own view of the conversation's state (`context["state"]`, scoped by the
defense's name), kept only when the check answered in time.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping, Sequence
from typing import Any

import paperplug
from paperplug import ChatModel, Guard, Verdict, compose
from paperplug.checks import check_sequence, check_type
from paperplug.state import ConversationState, StateError
from paperplug_gateway.config import ConfigError, DefenseSpec, UpstreamConfig

UPSTREAM = "upstream"  # a parameter value that stands for a ChatModel of the gateway's upstream


class DefenseTimeout(TimeoutError):
    """A defense did not answer within its time limit."""


class TimedDefense:
    """A defense whose `check` must answer within `timeout` seconds."""

    def __init__(self, defense: Any, name: str, timeout: float, pool: concurrent.futures.Executor):
        self.defense, self.name, self.timeout, self._pool = defense, name, timeout, pool
        self.stage = defense.stage

    def check(self, payload: Any, context: Mapping[str, Any] | None = None) -> Verdict:
        state = (context or {}).get("state")
        if isinstance(state, ConversationState):
            state = state.scoped(self.name)
            context = {**context, "state": state}
        future = self._pool.submit(self.defense.check, payload, context)
        try:
            verdict = future.result(timeout=self.timeout)
        except concurrent.futures.TimeoutError:
            if state is not None:
                state.abandon()
            raise DefenseTimeout(f"{self.name} did not answer within {self.timeout:g} s") from None
        except BaseException:
            if state is not None:
                state.abandon()
            raise
        if state is not None:
            state.commit()
        return verdict


def upstream_chat_model(upstream: UpstreamConfig, url: str) -> Any:
    """A synchronous ChatModel of the upstream (for a defense that asks a model, e.g. DRIFT's
    planner): paperplug-llm's OpenAI-compatible client."""
    from paperplug_llm import OpenAIChatModel

    return OpenAIChatModel(
        upstream.model or "default", url, api_key=upstream.api_key, timeout=upstream.timeout
    )


def build_guard(
    specs: Sequence[DefenseSpec],
    *,
    upstream_model: Any = None,
    pool: concurrent.futures.Executor | None = None,
) -> Guard:
    """The composed guard; a `ConfigError` naming the `[[defense]]` that cannot be built."""
    specs = check_sequence(specs, "specs", DefenseSpec, min_len=0, what="DefenseSpec")
    check_type(
        upstream_model, "upstream_model", (ChatModel, type(None)), what="a ChatModel or None"
    )
    check_type(pool, "pool", (concurrent.futures.Executor, type(None)), what="an Executor or None")
    pool = pool or concurrent.futures.ThreadPoolExecutor(
        max_workers=32, thread_name_prefix="defense"
    )
    known = {c.name for c in paperplug.list_components("defense")}
    defenses = []
    for i, spec in enumerate(specs):
        if spec.name not in known:
            raise ConfigError(
                f"defense[{i}].name: no defense named {spec.name!r} is installed "
                f"(installed: {', '.join(sorted(known)) or 'none'})"
            )
        params = {
            k: (upstream_model if v == UPSTREAM and upstream_model is not None else v)
            for k, v in spec.params.items()
        }
        try:
            defense = paperplug.load("defense", spec.name, **params)
        except Exception as exc:
            raise ConfigError(
                f"defense[{i}] ({spec.name}) cannot be built: {type(exc).__name__}: {exc}"
            ) from exc
        defenses.append(TimedDefense(defense, spec.name, spec.timeout, pool))
    return compose(*defenses, raises=(StateError,))
