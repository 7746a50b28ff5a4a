"""LLM proposer over any ChatModel: AMA's two prompts (initial design; in-context refinement
from the scored history), written for this package in the paper's spirit."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from paperplug.checks import check_scalar
from paperplug_ama.proposal import ProposalContext, parse_tool_json
from paperplug_ama.scoring import ScoredCandidate

INITIAL_PROMPT = """You design tools for LLM agents.
The agent receives user requests such as:
{tasks}

It already has these tools (learn their naming and description style):
{tools}

Design one new tool that {scope}, follows the same style (a snake_case name; a description
that says what the tool does and when it should be used) and that the agent would pick
first whenever a request fits. Keep the description under 60 words and do not quote the
requests. Reply with JSON only: {{"name": "...", "description": "..."}}"""

REFINE_PROMPT = """You improve tool metadata so that an LLM agent chooses the tool.
The agent receives user requests such as:
{tasks}

Tools tried so far, each with its selection rate (0 to 1, higher is better):
{history}

Write a new tool whose selection rate is closer to 1: keep what the best tools do well,
cover the requests more broadly, and make the tool the convincing first choice. Do not
mention selection rates, keep the description under 60 words, do not quote the requests.
Reply with JSON only: {{"name": "...", "description": "..."}}"""

SCOPES = {
    "targeted": "covers all of these requests precisely and fills gaps the existing tools leave",
    "untargeted": "is general enough to be useful for requests of every kind above",
}


class LLMProposer:
    """Candidates from a chat model, sampled at `temperature` with per-call seeds; replies
    without a parsable {"name", "description"} object are dropped (counted in `failures`)."""

    def __init__(
        self,
        chat_model: Any,
        *,
        temperature: float = 0.8,
        max_tokens: int = 200,
        max_tasks: int = 10,
        max_tools: int = 10,
    ) -> None:
        if not callable(getattr(chat_model, "chat", None)):
            raise TypeError("chat_model must implement the ChatModel protocol (chat(messages))")
        self.chat_model = chat_model
        self.temperature = check_scalar(temperature, "temperature", low=0.0)
        self.max_tokens = check_scalar(max_tokens, "max_tokens", "int", low=1)
        self.max_tasks = check_scalar(max_tasks, "max_tasks", "int", low=1)
        self.max_tools = check_scalar(max_tools, "max_tools", "int", low=1)
        self.failures = 0

    def _ask(self, prompt: str, n: int, rng: random.Random) -> list[dict]:
        out = []
        for _ in range(n):
            reply = self.chat_model.chat(
                [{"role": "user", "content": prompt}],
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=rng.randrange(2**31),
            )
            tool = parse_tool_json(reply)
            if tool is None:
                self.failures += 1
            else:
                out.append(tool)
        return out

    def _tasks(self, context: ProposalContext, rng: random.Random) -> str:
        tasks = rng.sample(context.tasks, min(self.max_tasks, len(context.tasks)))
        return "\n".join(f"- {t}" for t in tasks)

    def initial(self, context: ProposalContext, n: int, rng: random.Random) -> list[dict]:
        tools = rng.sample(context.tools, min(self.max_tools, len(context.tools)))
        prompt = INITIAL_PROMPT.format(
            tasks=self._tasks(context, rng),
            tools="\n".join(f"- {t['name']}: {t['description']}" for t in tools),
            scope=SCOPES[context.mode],
        )
        return self._ask(prompt, n, rng)

    def refine(
        self,
        context: ProposalContext,
        history: Sequence[ScoredCandidate],
        n: int,
        rng: random.Random,
    ) -> list[dict]:
        shown = rng.choices(list(history), k=len(history))  # AMA resamples the top list
        lines = "\n".join(
            f"- {e.tool['name']}: {e.tool['description']} (selection rate {e.sr:.2f})"
            for e in shown
        )
        prompt = REFINE_PROMPT.format(tasks=self._tasks(context, rng), history=lines)
        return self._ask(prompt, n, rng)
