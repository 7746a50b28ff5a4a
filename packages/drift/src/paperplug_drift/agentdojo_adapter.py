"""DRIFT inside AgentDojo (`agentdojo==0.1.35`, the version the paper ran): pipeline elements
that put DRIFT around any agent element, the paper's text-protocol agent for any ChatModel,
and the oracle planner from a task's ground truth.

    pipeline = drift_pipeline(PromptingAgent(chat_model), Drift(chat_model))   # as the paper
    pipeline = drift_pipeline(any_agent_element, Drift(planner=AgentDojoOracle(suite)))
    suite.run_task_with_pipeline(pipeline, user_task, injection_task, injections)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paperplug import ChatModel
from paperplug.checks import check_scalar, check_sequence, check_type
from paperplug.extras import requires_extra

with requires_extra("paperplug-drift", "agentdojo", "AgentDojo"):
    from agentdojo.agent_pipeline import (
        AgentPipeline,
        BasePipelineElement,
        InitQuery,
        SystemMessage,
    )
    from agentdojo.agent_pipeline.agent_pipeline import load_system_message
    from agentdojo.agent_pipeline.tool_execution import ToolsExecutor
    from agentdojo.functions_runtime import (
        EmptyEnv,
        Env,
        FunctionCall,
        FunctionsRuntime,
        TaskEnvironment,
    )
    from agentdojo.models import MODEL_NAMES
    from agentdojo.task_suite import TaskSuite
    from agentdojo.types import ChatMessage, get_text_content_as_str, text_content_block_from_string

from paperplug_drift.calls import CallSyntaxError, as_call, extract_tag, parse_function_calls
from paperplug_drift.drift import Drift, DriftSession
from paperplug_drift.planner import Plan, oracle_plan
from paperplug_drift.prompts import agent_system_prompt
from paperplug_drift.toolsets import tool_specs
from paperplug_drift.usage import Usage, converse

EMPTY_ENV = EmptyEnv()  # AgentDojo's default environment, as a module-level singleton

REFUSAL_MARK = "[CALL ERROR]"


def _text(message: ChatMessage) -> str:
    content = message.get("content")
    if content is None:
        return ""
    return content if isinstance(content, str) else get_text_content_as_str(content)


def _with_text(message: ChatMessage, text: str) -> ChatMessage:
    return {**message, "content": [text_content_block_from_string(text)]}  # type: ignore[return-value]


class AgentDojoOracle:
    """Planner that reads the plan off the user task's ground truth ("oracle plan"): for
    measuring the validator and isolator apart from planning quality. It overstates a real
    planner; every result it produces is labelled so."""

    source = "oracle plan"

    def __init__(self, suite: Any) -> None:
        self.suite = check_type(suite, "suite", TaskSuite, what="an AgentDojo TaskSuite")
        self._tasks = {t.PROMPT: t for t in suite.user_tasks.values()}

    def plan(self, query: str, tools: Any, *, env: Env | None = None, **context: Any) -> Plan:
        """The plan of the user task whose prompt is `query` (`tools` are not read: the
        ground truth names its own), in `env` (default: the suite's)."""
        check_type(query, "query", str)
        check_sequence(tools, "tools", min_len=0)
        if env is not None:
            check_type(env, "env", TaskEnvironment, what="an AgentDojo environment")
        task = self._tasks.get(query)
        if task is None:
            raise ValueError(f"query is the prompt of no user task of suite {self.suite.name!r}")
        if env is None:
            env = self.suite.load_and_inject_default_environment({})
        return oracle_plan(task.ground_truth(env.model_copy(deep=True)), query)


class DriftElement(BasePipelineElement):
    """Wraps an agent element (an LLM element, a scripted agent): plans on the first turn,
    isolates every new tool result before the agent reads it, and validates the calls the
    agent proposes (duplicates dropped; a refused batch is replaced by a `[CALL ERROR]` user
    message). The plan and achieved trajectory travel to the agent in
    `extra_args["drift"]`. Put the same instance in the pipeline and in its tools loop."""

    def __init__(self, agent: BasePipelineElement, drift: Drift) -> None:
        check_type(agent, "agent", BasePipelineElement, what="an AgentDojo BasePipelineElement")
        self.agent, self.drift = agent, check_type(drift, "drift", Drift)
        self.name = getattr(agent, "name", None)
        self.session: DriftSession | None = None
        self._isolated: set[int] = set()

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Env = EMPTY_ENV,
        messages: Sequence[ChatMessage] = (),
        extra_args: dict | None = None,
    ) -> tuple[str, FunctionsRuntime, Env, Sequence[ChatMessage], dict]:
        extra_args = dict(extra_args or {})
        messages = list(messages)
        if self.session is None or not any(m["role"] == "assistant" for m in messages):
            tools = list(runtime.functions.values())
            self.session, self._isolated = self.drift.session(query, tools, env=env), set()
        session = self.session
        for i in range(len(messages) - 1, -1, -1):  # the tool results since the agent's turn
            if messages[i]["role"] != "tool":
                break
            if i not in self._isolated:
                self._isolated.add(i)
                isolation = session.isolate(_text(messages[i]))
                if isolation.found or isolation.withheld:
                    messages[i] = _with_text(messages[i], isolation.text)
        drift_state = {
            "plan": session.validator.plan,
            "achieved": list(session.validator.achieved),
            "query": query,
        }
        extra_args = {**extra_args, "drift": drift_state}
        if len(messages) > session.config.max_messages:
            stop = {
                "role": "assistant",
                "content": [text_content_block_from_string("")],
                "tool_calls": None,
            }
            return query, runtime, env, [*messages, stop], extra_args
        query, runtime, env, out, extra_args = self.agent.query(
            query, runtime, env, messages, extra_args
        )
        out = list(out)
        last = out[-1] if out else None
        if last is None or last["role"] != "assistant" or not last.get("tool_calls"):
            return query, runtime, env, out, extra_args
        calls = list(last["tool_calls"])
        decision = session.validate(calls)
        if decision.refused:
            out[-1] = {**last, "tool_calls": []}
            refusal = {
                "role": "user",
                "content": [text_content_block_from_string(decision.message)],
            }
            return query, runtime, env, [*out, refusal], extra_args
        allowed = {c.key() for c in decision.allowed}
        out[-1] = {**last, "tool_calls": [c for c in calls if as_call(c).key() in allowed]}
        return query, runtime, env, out, extra_args


class DriftToolsLoop(BasePipelineElement):
    """AgentDojo's tools loop that also goes on after a DRIFT refusal (the agent gets another
    turn), at most `max_iters` rounds (the paper's 15); it always ends on an assistant
    message, as AgentDojo's scoring needs."""

    def __init__(self, elements: Sequence[BasePipelineElement], max_iters: int = 15) -> None:
        self.elements = check_sequence(
            elements, "elements", BasePipelineElement, what="AgentDojo pipeline elements"
        )
        self.max_iters = check_scalar(max_iters, "max_iters", "int", low=1)

    @staticmethod
    def _goes_on(message: ChatMessage) -> bool:
        if message["role"] == "user":
            return REFUSAL_MARK in _text(message)
        return message["role"] == "assistant" and bool(message.get("tool_calls"))

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Env = EMPTY_ENV,
        messages: Sequence[ChatMessage] = (),
        extra_args: dict | None = None,
    ) -> tuple[str, FunctionsRuntime, Env, Sequence[ChatMessage], dict]:
        extra_args = dict(extra_args or {})
        if not messages:
            raise ValueError("the tools loop needs the conversation so far")
        for _ in range(self.max_iters):
            if not self._goes_on(messages[-1]):
                break
            for element in self.elements:
                query, runtime, env, messages, extra_args = element.query(
                    query, runtime, env, messages, extra_args
                )
        if messages[-1]["role"] != "assistant" or messages[-1].get("tool_calls"):
            note = "[DRIFT] stopped: the iteration limit was reached."
            end = {
                "role": "assistant",
                "content": [text_content_block_from_string(note)],
                "tool_calls": None,
            }
            messages = [*messages, end]
        return query, runtime, env, messages, extra_args


def drift_pipeline(
    agent: BasePipelineElement,
    drift: Drift,
    *,
    system_message: str | None = None,
    name: str | None = None,
) -> AgentPipeline:
    """[system message, user query, DRIFT(agent), loop(tools, DRIFT(agent))], the official
    layout; `name` must contain an AgentDojo model key (default: the agent's name + "-drift")."""
    if system_message is not None and check_type(system_message, "system_message", str) == "":
        raise ValueError("system_message is empty: give the text or None (AgentDojo's)")
    if name is not None and not any(key in check_type(name, "name", str) for key in MODEL_NAMES):
        raise ValueError(
            f"name must contain an AgentDojo model key (attacks address the model by it), "
            f"such as 'local'; got {name!r}"
        )
    element = DriftElement(agent, drift)
    pipeline = AgentPipeline(
        [
            SystemMessage(system_message or load_system_message(None)),
            InitQuery(),
            element,
            DriftToolsLoop([ToolsExecutor(), element], max_iters=drift.config.max_iters),
        ]
    )
    pipeline.name = name or f"{getattr(agent, 'name', None) or 'local'}-drift"
    return pipeline


class PromptingAgent(BasePipelineElement):
    """The paper's agent over any ChatModel: a system prompt with the tools and, under DRIFT,
    the plan, checklist and achieved trajectory; the reply's `<function_call>[f(a=1)]` becomes
    AgentDojo tool calls, `<final_answer>` the answer. A reply that does not parse is sent back
    with the error, at most `max_attempts` times."""

    def __init__(
        self,
        model: Any,
        *,
        name: str = "local",
        max_attempts: int = 3,
        max_tokens: int = 512,
        usage: Usage | None = None,
    ) -> None:
        check_type(model, "model", ChatModel, what="a ChatModel with chat(messages)")
        self.model, self.name = model, check_type(name, "name", str)
        self.max_attempts = check_scalar(max_attempts, "max_attempts", "int", low=1)
        self.max_tokens = check_scalar(max_tokens, "max_tokens", "int", low=1)
        self.usage = check_type(usage, "usage", Usage) if usage is not None else Usage()
        self._count = 0

    def _render(
        self,
        query: str,
        runtime: FunctionsRuntime,
        messages: Sequence[ChatMessage],
        extra_args: dict,
    ) -> list[dict]:
        state = extra_args.get("drift") or {}
        system = agent_system_prompt(
            tool_specs(list(runtime.functions.values())),
            state.get("plan"),
            state.get("achieved"),
            query,
        )
        chat = [{"role": "system", "content": system}]
        for m in messages:
            if m["role"] == "system":
                continue
            if m["role"] == "tool":
                name = m["tool_call"].function if m.get("tool_call") else "tool"
                body = m.get("error") or _text(m)
                chat.append(
                    {
                        "role": "user",
                        "content": f'<function_result name="{name}">\n{body}\n</function_result>',
                    }
                )
            else:
                chat.append(
                    {"role": "user" if m["role"] == "user" else "assistant", "content": _text(m)}
                )
        return chat

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Env = EMPTY_ENV,
        messages: Sequence[ChatMessage] = (),
        extra_args: dict | None = None,
    ) -> tuple[str, FunctionsRuntime, Env, Sequence[ChatMessage], dict]:
        extra_args = dict(extra_args or {})
        chat = self._render(query, runtime, messages, extra_args)
        reply, calls = "", []
        for _ in range(self.max_attempts):
            reply = converse(
                self.model, chat, stage="agent", usage=self.usage, max_tokens=self.max_tokens
            )
            try:
                calls = parse_function_calls(extract_tag(reply, "function_call") or "")
                break
            except CallSyntaxError as exc:
                self.usage.parse_failures["agent"] += 1
                retry = {"role": "user", "content": f"Invalid <function_call>: {exc}"}
                chat = [*chat, {"role": "assistant", "content": reply}, retry]
        tool_calls = []
        for call in calls:
            self._count += 1
            tool_calls.append(
                FunctionCall(function=call.name, args=call.arguments, id=f"call_{self._count}")
            )
        text = extract_tag(reply, "final_answer") if not tool_calls else reply
        message = {
            "role": "assistant",
            "content": [text_content_block_from_string(text if text is not None else reply)],
            "tool_calls": tool_calls or None,
        }
        return query, runtime, env, [*messages, message], extra_args
