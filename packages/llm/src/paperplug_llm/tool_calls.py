"""How a local model is told about tools and how its proposed calls are read back.

Models whose chat template renders `tools` get them natively. Otherwise a system message lists
the tools' JSON specs and asks for `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`,
the Hermes/Qwen format, which is also what those models emit natively.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from paperplug_llm.messages import ToolCall, check_tools

TOOL_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)

TOOL_SYSTEM_PROMPT = (
    "You can call these tools. To call one, answer with only a line like\n"
    '<tool_call>{{"name": "get_time", "arguments": {{"city": "Oslo"}}}}</tool_call>\n'
    "Tools:\n{specs}"
)


def tool_system_prompt(tool_specs: Sequence[Mapping[str, Any]]) -> str:
    """The system text that lists the tools (OpenAI `tools` entries) and the call format."""
    if tool_specs is None:
        raise TypeError("tool_specs must be a list of OpenAI tools entries, got None")
    tool_specs = check_tools(tool_specs, "tool_specs")
    return TOOL_SYSTEM_PROMPT.format(specs="\n".join(json.dumps(s["function"]) for s in tool_specs))


def parse_tool_calls(text: str) -> tuple[str, list[ToolCall]]:
    """Split a reply into its plain text and the `<tool_call>` blocks it contains.

    A block whose JSON does not parse becomes a call with the raw string as `arguments`, so
    the agent loop can tell the model what was wrong instead of silently dropping it.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    calls = []
    for i, body in enumerate(TOOL_CALL_RE.findall(text)):
        try:
            obj = json.loads(body)
            name, args = str(obj["name"]), obj.get("arguments", obj.get("parameters", {}))
        except (ValueError, KeyError, TypeError):
            name, args = "", body
        calls.append(ToolCall(name=name, arguments=args, id=f"call_{i}"))
    return TOOL_CALL_RE.sub("", text).strip(), calls


def forced_call_prefix(name: str, parameters: Mapping[str, Any]) -> str:
    """The text a forced call starts with (OpenAI's tool_choice "required" or a named function):
    the tool name and the first parameter's key are written for the model, which fills in the
    values; the arguments object is read back with `read_arguments`."""
    keys = list(parameters.get("required") or parameters.get("properties") or [])
    first = f"{json.dumps(keys[0])}: " if keys else ""
    return f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {{{first}'


def read_arguments(text: str) -> dict[str, Any] | str:
    """The first JSON object at the start of `text` (what follows it is ignored), else `text`."""
    try:
        value, _ = json.JSONDecoder().raw_decode(text.lstrip())
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def format_tool_call(call: ToolCall) -> str:
    """A past call as the model would have written it."""
    args = call.arguments
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = json.loads(args)
    return "<tool_call>" + json.dumps({"name": call.name, "arguments": args}) + "</tool_call>"


def render_for_template(
    messages: Sequence[Mapping[str, Any]], tool_specs: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """Messages a plain chat template accepts: the tool list as a system message, past calls
    as `<tool_call>` text, tool results as user turns inside `<tool_response>`."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "assistant" and m.get("tool_calls"):
            calls = [
                format_tool_call(
                    ToolCall(c["function"]["name"], c["function"].get("arguments", {}))
                )
                for c in m["tool_calls"]
            ]
            out.append({"role": "assistant", "content": "\n".join([content, *calls]).strip()})
        elif role == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{content}\n</tool_response>"})
        else:
            out.append({"role": role, "content": content})
    if tool_specs:
        prompt = tool_system_prompt(tool_specs)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + prompt}
        else:
            out.insert(0, {"role": "system", "content": prompt})
    return out
