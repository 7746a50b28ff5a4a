"""Function calls in the paper's text protocol: `<function_call>[f(a=1), g()]</function_call>`.

The agent writes its calls as a Python list of keyword-argument calls (DRIFT's tool-calling
prompt); the validator compares calls by name and by their JSON-canonical arguments.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import check_type


class CallSyntaxError(ValueError):
    """The text inside `<function_call>` is not a list of keyword-argument calls."""


@dataclass
class Call:
    """One proposed function call: a name and keyword arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        """Name plus canonical JSON arguments: two calls with equal keys are duplicates."""
        return json.dumps([self.name, self.arguments], sort_keys=True, default=str)

    def render(self) -> str:
        """The call as Python source, as the agent writes it."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.name}({args})"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


def as_call(obj: Any) -> Call:
    """A Call from a Call, a {"name", "arguments"} mapping (arguments may be a JSON string), an
    OpenAI tool call, a paperplug-llm ToolCall, an AgentDojo FunctionCall or its dict form."""
    if isinstance(obj, Call):
        return obj
    if isinstance(obj, Mapping) and "function" in obj and isinstance(obj["function"], Mapping):
        obj = obj["function"]  # OpenAI's {"type": "function", "function": {...}}
    if isinstance(obj, Mapping):  # {"name", "arguments"}, or AgentDojo's {"function", "args"}
        name = obj.get("name", obj.get("function"))
        arguments = obj.get("arguments", obj.get("args", {}))
    elif hasattr(obj, "function") and hasattr(obj, "args"):  # AgentDojo FunctionCall
        name, arguments = obj.function, obj.args
    elif hasattr(obj, "name") and hasattr(obj, "arguments"):  # paperplug-llm ToolCall
        name, arguments = obj.name, obj.arguments
    else:
        raise TypeError(f"cannot read a function call from {type(obj).__name__}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise CallSyntaxError(f"arguments of {name} are not JSON: {exc}") from exc
    if not isinstance(name, str) or not name:
        raise TypeError(f"a call needs a non-empty string name, got {name!r}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise TypeError(f"arguments of {name} must be a mapping, got {type(arguments).__name__}")
    return Call(name, dict(arguments))


def as_calls(calls: Any, name: str = "calls") -> list[Call]:
    """`as_call` of each item of the list `calls`; an error names the argument and the item."""
    if isinstance(calls, (str, bytes, Mapping)) or not hasattr(calls, "__iter__"):
        raise TypeError(f"{name} must be a list of function calls, got {type(calls).__name__}")
    out = []
    for k, call in enumerate(calls):
        try:
            out.append(as_call(call))
        except CallSyntaxError:
            raise
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name}[{k}]: {exc}") from exc
    return out


def extract_tag(text: str, tag: str) -> str | None:
    """The content of the first `<tag>...</tag>` in `text` (stripped), or None."""
    match = re.search(rf"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", text or "", re.S)
    return match.group(1).strip() if match else None


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError as exc:
        raise CallSyntaxError(f"argument values must be literals, got {ast.unparse(node)}") from exc


def parse_function_calls(text: str) -> list[Call]:
    """Parse `[f(a=1), g()]` (or one bare call, or `[]`/`None`); bare names become calls with
    no arguments, as the official parser's fix-up does. Raises CallSyntaxError."""
    check_type(text, "text", (str, type(None)), what="a string or None")
    source = (text or "").strip()
    if source in ("", "[]", "None"):
        return []
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        raise CallSyntaxError(f"not Python syntax: {exc.msg}") from exc
    items = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    calls = []
    for item in items:
        if isinstance(item, ast.Name):  # `[get_iban]`: a call with no arguments
            calls.append(Call(item.id))
            continue
        if not isinstance(item, ast.Call) or not isinstance(item.func, ast.Name):
            raise CallSyntaxError(f"expected a call like f(a=1), got {ast.unparse(item)}")
        if item.args:
            raise CallSyntaxError(f"{item.func.id}: use keyword arguments only")
        arguments = {}
        for kw in item.keywords:
            if kw.arg is None:
                raise CallSyntaxError(f"{item.func.id}: **kwargs is not allowed")
            arguments[kw.arg] = _literal(kw.value)
        calls.append(Call(item.func.id, arguments))
    return calls


def render_calls(calls: list[Call]) -> str:
    """`[f(a=1), g()]`."""
    return "[" + ", ".join(c.render() for c in calls) + "]"
