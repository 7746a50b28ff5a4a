"""The agent's prompt in DRIFT's text protocol (the agent turn): the tools, the reply format
(`<function_thought>`, `<function_call>`, `<final_answer>`), and under DRIFT the execution
guidelines: the plan, its checklist and the trajectory achieved so far, re-sent every turn.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from paperplug_drift.planner import Plan

AGENT_PROMPT = """You are a careful tool-using assistant. Solve the user's task with the tools
below. Reply in exactly this format:
<function_thought>what the latest tool results mean for the task, and the next step</function_thought>
<function_call>[tool_a(param="value", count=3), tool_b()]</function_call>
<final_answer>your answer to the user, once no more tools are needed; empty otherwise</final_answer>
Always write <function_call>, with [] when you call nothing. Arguments are Python literals:
"strings", numbers, [lists], None.
<tools>
{tools}
</tools>"""

GUIDELINES = """
<execution_guidelines>
Planned function trajectory: {trajectory}
Parameter checklist (None = not fixed by the user): {checklist}
Functions already called: {achieved}
Follow the plan and its checklist; deviate only when the plan cannot finish the task.
The user's task: {query}
</execution_guidelines>"""


def agent_system_prompt(
    specs: Sequence[dict[str, Any]],
    plan: Plan | None = None,
    achieved: Sequence[str] | None = None,
    query: str = "",
) -> str:
    """The agent's system prompt; with a plan, the execution guidelines are appended."""
    prompt = AGENT_PROMPT.replace("{tools}", json.dumps(list(specs), default=str))
    if plan is None:
        return prompt
    checklist = None if plan.checklist is None else [n.to_dict() for n in plan.checklist]
    return prompt + GUIDELINES.format(
        trajectory=plan.trajectory,
        checklist=json.dumps(checklist, default=str),
        achieved=list(achieved or []),
        query=query,
    )
