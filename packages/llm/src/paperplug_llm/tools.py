"""Tools as Python callables: a JSON schema from the signature and docstring, validated calls.

The schema follows OpenAI's function-calling format; arguments are checked with the
`jsonschema` library (Draft 2020-12) before the callable runs.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import jsonschema

from paperplug.checks import check_type

_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


class ToolArgumentError(ValueError):
    """Arguments proposed for a tool do not match its JSON schema."""


def type_schema(tp: Any) -> dict[str, Any]:
    """JSON schema of a type hint: scalars, list/tuple/dict, Literal, Enum, Optional/Union."""
    if tp is inspect.Parameter.empty or tp is Any:
        return {}
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [type_schema(a) for a in args]}
    if tp in (list, tuple, set) or origin in (list, set, tuple, Sequence):
        schema: dict[str, Any] = {"type": "array"}
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            schema["prefixItems"] = [type_schema(a) for a in args]
            schema["minItems"] = schema["maxItems"] = len(args)
        elif args:
            schema["items"] = type_schema(args[0])
        return schema
    if tp is dict or origin in (dict, Mapping):
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = type_schema(args[1])
        return schema
    raise TypeError(f"no JSON schema for type hint {tp!r}")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary (text before the parameter section) and per-parameter descriptions.

    Reads Google style (`Args:` / `name (type): text`) and Sphinx style (`:param name: text`).
    """
    doc = inspect.cleandoc(doc or "")
    params: dict[str, str] = {}
    for name, text in re.findall(r":param\s+(?:\w+\s+)?(\w+):\s*(.+)", doc):
        params[name] = text.strip()
    section = re.search(r"^(Args|Arguments|Parameters):\s*$(.*?)(?=^\S|\Z)", doc, re.M | re.S)
    if section:
        for name, text in re.findall(
            r"^\s+(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$", section.group(2), re.M
        ):
            params[name] = text.strip()
    summary = re.split(
        r"^(?:Args|Arguments|Parameters|Returns|Raises):\s*$|^:param", doc, flags=re.M
    )[0]
    return " ".join(summary.split()), params


class Tool:
    """A callable with a name, a description and a JSON schema of its parameters."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable to be a tool, got {type(fn).__name__}")
        self.fn = fn
        self.name = check_type(name, "name", str) if name is not None else fn.__name__
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ValueError(f"tool name must match [A-Za-z0-9_-]{{1,64}}, got {self.name!r}")
        summary, param_docs = parse_docstring(getattr(fn, "__doc__", None))
        if description is not None:
            check_type(description, "description", str)
        self.description = description if description is not None else summary
        if parameters is not None:
            check_type(parameters, "parameters", Mapping, what="a JSON schema object")
        self.parameters = dict(parameters) if parameters is not None else self._schema(param_docs)
        try:
            jsonschema.Draft202012Validator.check_schema(self.parameters)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"parameters is not a valid JSON schema: {exc.message}") from None
        self._validator = jsonschema.Draft202012Validator(self.parameters)

    def _schema(self, param_docs: dict[str, str]) -> dict[str, Any]:
        hints = typing.get_type_hints(self.fn)
        props: dict[str, Any] = {}
        required = []
        for p in inspect.signature(self.fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            prop = type_schema(hints.get(p.name, p.annotation))
            if p.name in param_docs:
                prop["description"] = param_docs[p.name]
            if p.default is p.empty:
                required.append(p.name)
            elif p.default is None or isinstance(p.default, (str, int, float, bool)):
                prop["default"] = p.default
            props[p.name] = prop
        return {
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": False,
        }

    def spec(self) -> dict[str, Any]:
        """The OpenAI `tools` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Check `arguments` against the schema; raise ToolArgumentError naming every problem."""
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError(
                f"{self.name}: arguments must be a JSON object, got {type(arguments).__name__}"
            )
        errors = sorted(self._validator.iter_errors(dict(arguments)), key=lambda e: list(e.path))
        if errors:
            problems = "; ".join(
                f"{'.'.join(['arguments', *map(str, e.path)])}: {e.message}" for e in errors
            )
            raise ToolArgumentError(f"{self.name}: {problems}")
        return dict(arguments)

    def __call__(self, **arguments: Any) -> Any:
        """Validate, then run the callable."""
        return self.fn(**self.validate(arguments))

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


def tool(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Decorator: `@tool` or `@tool(name=..., description=...)` turns a function into a Tool."""
    if fn is None:
        return lambda f: Tool(f, **options)
    return Tool(fn, **options)


def as_tools(tools: Any) -> dict[str, Tool]:
    """Tools by name from a list of callables/Tools or a {name: callable} mapping."""
    if tools is None:
        return {}
    if isinstance(tools, (str, bytes)) or not isinstance(tools, (Mapping, Iterable)):
        raise TypeError(
            f"tools must be a list of callables or a {{name: callable}} dict, got "
            f"{type(tools).__name__}"
        )
    if isinstance(tools, Mapping):
        items = [t if isinstance(t, Tool) else Tool(t, name=n) for n, t in tools.items()]
    else:
        items = [t if isinstance(t, Tool) else Tool(t) for t in tools]
    out: dict[str, Tool] = {}
    for t in items:
        if t.name in out:
            raise ValueError(f"two tools are named {t.name!r}")
        out[t.name] = t
    return out
