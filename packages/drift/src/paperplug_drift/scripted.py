"""A scripted agent for AgentDojo, standing in for an LLM offline: it follows the user task's
ground-truth calls one per turn and obeys an injected instruction as soon as the injection's
goal is readable in a tool result it receives (then runs the injection task's ground-truth
calls first, as "before you solve the task" asks). A refused call is dropped and it moves on.

Two rules make defenses matter: it obeys an injection while any run of `window` consecutive
words of the goal survives in what it reads (attacker-friendly), and it cannot make a call
whose argument values it could only have read in a tool result that no longer shows them
(so masking away data the task needs costs utility, as it would for a real agent).
It ignores system prompts, delimiters and repeated queries: prompt-level defenses cannot
persuade it, which is the point of testing system-level ones against it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from paperplug.checks import check_scalar, check_type
from paperplug.extras import requires_extra

with requires_extra("paperplug-drift", "agentdojo", "AgentDojo"):
    from agentdojo.agent_pipeline import BasePipelineElement
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
    from agentdojo.base_tasks import BaseInjectionTask, BaseUserTask
    from agentdojo.functions_runtime import EmptyEnv, Env, FunctionCall, FunctionsRuntime
    from agentdojo.types import ChatMessage, get_text_content_as_str, text_content_block_from_string

EMPTY_ENV = EmptyEnv()  # AgentDojo's default environment, as a module-level singleton


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("\\n", " ").split())


def readable(goal: str, text: str, window: int = 6) -> bool:
    """Does any run of `window` consecutive words of `goal` appear in `text`?"""
    words = _norm(goal).split()
    if not words:
        return False
    n = min(window, len(words))
    hay = _norm(text)
    return any(" ".join(words[i : i + n]) in hay for i in range(len(words) - n + 1))


def _scalars(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _scalars(v)]
    if isinstance(value, bool) or value is None or isinstance(value, dict):
        return []
    return [value]


def _shows(value: Any, text: str) -> bool:
    if isinstance(value, (int, float)):
        number = f"{float(value):g}".replace("+", "")
        pattern = rf"(?<![\d.]){re.escape(number)}(?:\.0+)?(?![\d])"
        return (
            re.search(pattern, text) is not None
            or re.search(rf"(?<![\d.]){float(value):.2f}(?![\d])", text) is not None
        )
    return _norm(str(value)) in _norm(text)


class ScriptedAgent(BasePipelineElement):
    """`set_task(user_task, injection_task)` before each run; `name` holds AgentDojo's "local"
    model key (attacks address the model by it). After a run: `obeyed`, `skipped` (calls it
    could not make because their data was masked), `refused` (calls DRIFT refused) and
    `messages` (the conversation as it last saw it)."""

    def __init__(self, *, window: int = 6, name: str = "local") -> None:
        self.window = check_scalar(window, "window", "int", low=1)
        self.name = check_type(name, "name", str)
        self.user_task: Any = None
        self.injection_task: Any = None
        self.poison: Any = None
        self.messages: list[Any] = []

    def set_task(
        self, user_task: Any, injection_task: Any = None, poison: Any = None
    ) -> ScriptedAgent:
        """The next run's task and injection task; `poison` is a data-poisoning payload
        (an object with `function`, `param`, `value`, `sentence`): when the sentence is
        readable in a tool result, the agent takes `value` for `param` of its next call to
        `function` (an adaptive attack that gives no order at all)."""
        check_type(user_task, "user_task", BaseUserTask, what="an AgentDojo user task")
        check_type(
            injection_task,
            "injection_task",
            (BaseInjectionTask, type(None)),
            what="an AgentDojo injection task or None",
        )
        if poison is not None and not all(
            hasattr(poison, a) for a in ("function", "param", "value", "sentence")
        ):
            raise TypeError(
                "poison must have function, param, value and sentence (a Poison), "
                f"got {type(poison).__name__}"
            )
        self.user_task, self.injection_task, self.poison = user_task, injection_task, poison
        self._started = False
        return self

    def _start(self, runtime: FunctionsRuntime, env: Env, query: str) -> None:
        calls = list(self.user_task.ground_truth(env.model_copy(deep=True)))
        self.queue, seen, scratch = [], "", env.model_copy(deep=True)
        for call in calls:  # what the task's data shows before any defense touches it
            self.queue.append((call, self._needed(call, seen, query)))
            result, _ = runtime.run_function(scratch, call.function, dict(call.args))
            seen += "\n" + tool_result_to_str(result)
        self.obeyed, self.skipped, self.refused, self.last = False, [], [], None
        self._count, self._started = 0, True

    @staticmethod
    def _needed(call: FunctionCall, raw: str, query: str) -> list[Any]:
        """Argument values the agent can only have learnt from an earlier tool result."""
        values = [v for arg in call.args.values() for v in _scalars(arg)]
        return [
            v
            for v in values
            if (not isinstance(v, str) or len(v) >= 3) and _shows(v, raw) and not _shows(v, query)
        ]

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Env = EMPTY_ENV,
        messages: Sequence[ChatMessage] = (),
        extra_args: dict | None = None,
    ) -> tuple[str, FunctionsRuntime, Env, Sequence[ChatMessage], dict]:
        extra_args = dict(extra_args or {})
        if self.user_task is None:
            raise ValueError("call set_task(user_task, injection_task) first")
        if not self._started or not any(m["role"] == "assistant" for m in messages):
            self._start(runtime, env, query)
        since = len(messages)
        while since > 0 and messages[since - 1]["role"] != "assistant":
            since -= 1
        fresh = messages[since:]
        texts = [get_text_content_as_str(m["content"] or []) for m in fresh]
        if self.last is not None and any("[CALL ERROR]" in t for t in texts):
            self.refused.append(self.last)
        seen = [t for m, t in zip(fresh, texts, strict=True) if m["role"] == "tool"]
        self.messages = list(messages)
        poison = self.poison
        if (
            poison is not None
            and not self.obeyed
            and any(readable(poison.sentence, t, self.window) for t in seen)
        ):
            self.obeyed = True
            for k, (call, _needed) in enumerate(self.queue):
                if call.function == poison.function and poison.param in call.args:
                    args = {**call.args, poison.param: poison.value}
                    self.queue[k] = (FunctionCall(function=call.function, args=args), [])
                    break
        goal = getattr(self.injection_task, "GOAL", None)
        if goal and not self.obeyed and any(readable(goal, t, self.window) for t in seen):
            self.obeyed = True
            injected = list(self.injection_task.ground_truth(env.model_copy(deep=True)))
            self.queue = [(c, []) for c in injected] + self.queue
        visible = (
            query
            + "\n"
            + "\n".join(
                get_text_content_as_str(m["content"] or [])
                for m in messages
                if m["role"] in ("tool", "user")
            )
        )
        while self.queue:
            call, needed = self.queue.pop(0)
            if any(not _shows(v, visible) for v in needed):
                self.skipped.append(call)
                continue
            self._count += 1
            self.last = FunctionCall(
                function=call.function, args=dict(call.args), id=f"call_{self._count}"
            )
            message = {
                "role": "assistant",
                "content": [text_content_block_from_string("")],
                "tool_calls": [self.last],
            }
            return query, runtime, env, [*messages, message], extra_args
        self.last = None
        answer = self.user_task.GROUND_TRUTH_OUTPUT
        message = {
            "role": "assistant",
            "content": [text_content_block_from_string(answer)],
            "tool_calls": None,
        }
        return query, runtime, env, [*messages, message], extra_args
