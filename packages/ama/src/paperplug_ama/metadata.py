"""Tool metadata as plain dicts: {"name", "description", "parameters"} (OpenAI's function shape).

Dicts keep the attack's output inspectable by any tool-stage guard and serialisable as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paperplug.checks import check_type

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "required": []}


def make_tool(
    name: str, description: str, parameters: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A tool-metadata dict; `parameters` is a JSON schema (an empty object schema if None)."""
    check_type(name, "name", str)
    if not name.strip():
        raise ValueError(f"tool name must be a non-empty string, got {name!r}")
    check_type(description, "description", str)
    if parameters is not None:
        check_type(parameters, "parameters", Mapping, what="a JSON-schema mapping")
        if parameters.get("type", "object") != "object":
            raise ValueError(
                f"parameters must be a JSON schema of type 'object', got {parameters.get('type')!r}"
            )
    params = _copy(parameters) if parameters is not None else _copy(EMPTY_SCHEMA)
    return {"name": name.strip(), "description": description.strip(), "parameters": params}


def as_tool(tool: Any, name: str = "tool") -> dict[str, Any]:
    """A fresh, checked copy of a tool given as a dict (flat or OpenAI `{"function": {...}}`);
    `name` is the argument as the caller wrote it, for the errors."""
    check_type(name, "name", str)
    check_type(tool, name, Mapping, what="a mapping with name and description")
    spec = tool.get("function", tool)
    if not isinstance(spec, Mapping) or "name" not in spec or "description" not in spec:
        raise ValueError(f"{name} needs 'name' and 'description' keys, got keys {sorted(tool)}")
    try:
        return make_tool(spec["name"], spec["description"], spec.get("parameters"))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from exc


def tool_text(tool: Mapping[str, Any]) -> str:
    """The text a retriever indexes for a tool: "name: description" (names split at underscores)."""
    check_type(tool, "tool", Mapping, what="a tool mapping")
    return f"{tool['name'].replace('_', ' ')}: {tool['description']}"


def openai_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The tool in OpenAI's `tools` entry format, for chat backends."""
    return {"type": "function", "function": _copy(dict(tool))}


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value
