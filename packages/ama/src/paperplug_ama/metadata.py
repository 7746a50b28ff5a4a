"""Tool metadata as plain dicts: {"name", "description", "parameters"} (OpenAI's function shape).

Dicts keep the attack's output inspectable by any tool-stage guard and serialisable as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "required": []}


def make_tool(
    name: str, description: str, parameters: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A tool-metadata dict; `parameters` is a JSON schema (an empty object schema if None)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"tool name must be a non-empty string, got {name!r}")
    if not isinstance(description, str):
        raise TypeError(f"tool description must be a string, got {type(description).__name__}")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise TypeError(f"tool parameters must be a JSON-schema mapping, got {parameters!r}")
    params = _copy(parameters) if parameters is not None else _copy(EMPTY_SCHEMA)
    return {"name": name.strip(), "description": description.strip(), "parameters": params}


def as_tool(tool: Any) -> dict[str, Any]:
    """A fresh, checked copy of a tool given as a dict (flat or OpenAI `{"function": {...}}`)."""
    if not isinstance(tool, Mapping):
        raise TypeError(f"a tool must be a mapping with name and description, got {tool!r}")
    spec = tool.get("function", tool)
    if not isinstance(spec, Mapping) or "name" not in spec or "description" not in spec:
        raise ValueError(f"a tool needs 'name' and 'description' keys, got keys {sorted(tool)}")
    return make_tool(spec["name"], spec["description"], spec.get("parameters"))


def tool_text(tool: Mapping[str, Any]) -> str:
    """The text a retriever indexes for a tool: "name: description" (names split at underscores)."""
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
