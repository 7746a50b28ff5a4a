"""Tool descriptions as DRIFT's prompts see them: {name, description, parameters (JSON schema)}.

Accepts what a user brings: Python callables and paperplug-llm Tools, a {name: callable}
mapping, OpenAI `tools` entries, plain spec dicts, and AgentDojo `Function` objects.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def _spec_of(obj: Any) -> dict[str, Any]:
    if isinstance(obj, Mapping):
        spec = obj.get("function", obj) if obj.get("type") == "function" else obj
        if not isinstance(spec.get("name"), str):
            raise TypeError(f"tools: a tool spec needs a string 'name', got {dict(spec)!r}")
        return {
            "name": spec["name"],
            "description": str(spec.get("description", "")),
            "parameters": dict(spec.get("parameters") or {}),
        }
    params = getattr(obj, "parameters", None)
    if hasattr(params, "model_json_schema"):  # AgentDojo Function: a pydantic model class
        return {
            "name": obj.name,
            "description": str(obj.description),
            "parameters": params.model_json_schema(),
        }
    if isinstance(params, Mapping) and isinstance(getattr(obj, "name", None), str):
        return {  # a paperplug-llm Tool
            "name": obj.name,
            "description": str(getattr(obj, "description", "")),
            "parameters": dict(params),
        }
    if callable(obj):
        from paperplug_llm import Tool

        tool = Tool(obj)
        return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    raise TypeError(f"tools: cannot describe a tool from {type(obj).__name__}")


def tool_specs(tools: Any) -> list[dict[str, Any]]:
    """One spec per tool, in the caller's order; names must be unique."""
    if tools is None:
        raise TypeError("tools must be a list or mapping of tools, got None")
    if isinstance(tools, Mapping) and not {"name", "function"} & set(tools):
        items = []
        for name, t in tools.items():
            spec = _spec_of(t) if not callable(t) or hasattr(t, "parameters") else None
            if spec is None:
                from paperplug_llm import Tool

                tool = Tool(t, name=name)
                spec = {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }
            items.append(spec)
    elif isinstance(tools, (str, bytes)) or not hasattr(tools, "__iter__"):
        raise TypeError(f"tools must be a list or mapping of tools, got {type(tools).__name__}")
    else:
        items = [_spec_of(t) for t in tools]
    names = [s["name"] for s in items]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"tools: duplicate names {duplicates}")
    return items


def toolset_key(specs: list[dict[str, Any]]) -> str:
    """A digest of a toolset (order-free): the cache key of its privilege map."""
    canon = json.dumps(sorted(specs, key=lambda s: s["name"]), sort_keys=True, default=str)
    return hashlib.sha256(canon.encode()).hexdigest()[:16]
