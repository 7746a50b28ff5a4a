"""The chat-completions request, validated before any defense or the upstream sees it.

The fields and ranges are those of OpenAI's API as vLLM's `ChatCompletionRequest` reads them,
with strict types (`stream: "yes"` and `temperature: "hot"` are errors, not coerced). The first
violation is a `RequestError` naming the parameter by its path (`messages[2].role`,
`tools[0].function.name`), which the app answers with a 400 in OpenAI's error format. What
the gateway cannot guard is refused by name rather than passed through: more than one choice
(`n`), token log-probabilities, audio, non-text content parts, and the legacy `functions` API.
Unknown top-level fields pass through to the upstream unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from paperplug.checks import check_scalar

MAX_DEPTH = 64  # nesting of the JSON body (a tool's parameter schema nests a few levels)
ROLES = ("system", "developer", "user", "assistant", "tool")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
UNGUARDED = {
    "functions": "the legacy functions API is not supported: send tools instead",
    "function_call": "the legacy functions API is not supported: send tool_choice instead",
    "audio": "audio output is not supported: the gateway's output defenses check text only",
    "prediction": "predicted outputs are not supported",
}


class RequestError(ValueError):
    """A request that breaks the API; `param` is the path of the bad parameter."""

    def __init__(self, param: str | None, message: str) -> None:
        self.param = param
        self.message = (f"{param}: {message}" if param else message)[:500]  # a capped report
        super().__init__(self.message)


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)  # fmt: skip


def _type(value: Any, kind: type | tuple[type, ...], param: str, what: str) -> Any:
    """`value` if it is of `kind` (strictly: a boolean is no number), else a RequestError."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise RequestError(param, f"must be {what}, got a boolean")
    if not isinstance(value, kinds):
        raise RequestError(param, f"must be {what}, got {_kind(value)}")
    return value


def _number(value: Any, param: str, low: float, high: float) -> None:
    _type(value, (int, float), param, f"a number in [{low:g}, {high:g}]")
    if not low <= value <= high:
        raise RequestError(param, f"must be a number in [{low:g}, {high:g}], got {value!r}")


def _object(value: Any, param: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict:
    _type(value, dict, param, "an object")
    for key in value:
        if key not in allowed:
            raise RequestError(f"{param}.{key}", f"is not a field of {param}")
    for key in required:
        if key not in value:
            raise RequestError(f"{param}.{key}", "is required")
    return value


def _list(value: Any, param: str, low: int = 0, high: int | None = None) -> list:
    _type(value, list, param, "a list")
    if len(value) < low or (high is not None and len(value) > high):
        bound = f"at least {low}" if high is None else f"{low} to {high}"
        raise RequestError(param, f"must hold {bound} items, got {len(value)}")
    return value


def depth(value: Any) -> int:
    """How deep lists and objects nest in `value` (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:
                stack.extend(
                    (v, level + 1) for v in (item.values() if isinstance(item, dict) else item)
                )
    return deepest


# -- messages ---------------------------------------------------------------------------------
def _content(value: Any, param: str, *, optional: bool = False, refusal: bool = False) -> None:
    """A string, or a non-empty list of text parts (refusal parts too in an assistant turn)."""
    if value is None and optional:
        return
    if isinstance(value, str):
        return
    if not isinstance(value, list):
        raise RequestError(param, f"must be a string or a list of text parts, got {_kind(value)}")
    _list(value, param, low=1)
    for j, part in enumerate(value):
        where = f"{param}[{j}]"
        _type(part, dict, where, "a content part (an object)")
        kind = part.get("type")
        if kind == "text":
            _object(part, where, {"type", "text"}, ("text",))
            _type(part["text"], str, f"{where}.text", "a string")
        elif kind == "refusal" and refusal:
            _object(part, where, {"type", "refusal"}, ("refusal",))
            _type(part["refusal"], str, f"{where}.refusal", "a string")
        else:
            raise RequestError(
                f"{where}.type",
                f"{kind!r} parts are not accepted: the gateway's defenses check text parts only",
            )


def _tool_call(call: Any, param: str) -> None:
    _object(call, param, {"id", "type", "function"}, ("id", "function"))
    _type(call["id"], str, f"{param}.id", "a string")
    if call.get("type", "function") != "function":
        raise RequestError(f"{param}.type", f"must be 'function', got {call['type']!r}")
    function = _object(
        call["function"], f"{param}.function", {"name", "arguments"}, ("name", "arguments")
    )
    _type(function["name"], str, f"{param}.function.name", "a string")
    _type(function["arguments"], str, f"{param}.function.arguments", "a string (JSON)")


def _message(message: Any, param: str) -> None:
    _type(message, dict, param, "a message (an object with a role)")
    role = message.get("role")
    if "role" not in message:
        raise RequestError(f"{param}.role", "is required")
    if role == "function":
        raise RequestError(
            f"{param}.role",
            "the legacy 'function' role is not supported: send tool results as role 'tool'",
        )
    if not isinstance(role, str) or role not in ROLES:
        raise RequestError(f"{param}.role", f"must be one of {', '.join(ROLES)}, got {role!r}")
    if role == "assistant":
        _object(message, param, {"role", "content", "name", "tool_calls", "refusal", "function_call", "audio", "annotations"})  # fmt: skip
        calls = message.get("tool_calls")
        if calls is not None:
            for k, call in enumerate(_list(calls, f"{param}.tool_calls")):
                _tool_call(call, f"{param}.tool_calls[{k}]")
        _content(message.get("content"), f"{param}.content", optional=bool(calls), refusal=True)
        for key in ("function_call", "audio"):
            if message.get(key) is not None:
                raise RequestError(
                    f"{param}.{key}", "is not supported in a message: send tool_calls and text"
                )
        if message.get("refusal") is not None:
            _type(message["refusal"], str, f"{param}.refusal", "a string")
        if message.get("annotations") is not None:
            _list(message["annotations"], f"{param}.annotations")
    elif role == "tool":
        # `name` too: AgentDojo's OpenAI pipeline names the tool in its results
        _object(
            message, param, {"role", "content", "tool_call_id", "name"}, ("content", "tool_call_id")
        )
        _type(message["tool_call_id"], str, f"{param}.tool_call_id", "a string")
        _content(message["content"], f"{param}.content")
    else:
        _object(message, param, {"role", "content", "name"}, ("content",))
        _content(message["content"], f"{param}.content")
    if message.get("name") is not None:
        _type(message["name"], str, f"{param}.name", "a string")


# -- tools --------------------------------------------------------------------------------------
def _tools(tools: Any) -> set[str]:
    names = set()
    for i, tool in enumerate(_list(tools, "tools", high=128)):
        where = f"tools[{i}]"
        _object(tool, where, {"type", "function"}, ("type", "function"))
        if tool["type"] != "function":
            raise RequestError(
                f"{where}.type", f"only 'function' tools are supported, got {tool['type']!r}"
            )
        function = _object(tool["function"], f"{where}.function", {"name", "description", "parameters", "strict"}, ("name",))  # fmt: skip
        name = _type(function["name"], str, f"{where}.function.name", "a string")
        if not TOOL_NAME.match(name):
            raise RequestError(
                f"{where}.function.name", f"must match {TOOL_NAME.pattern}, got {name!r}"
            )
        if "description" in function:
            _type(function["description"], str, f"{where}.function.description", "a string")
        if "parameters" in function:
            _type(
                function["parameters"],
                dict,
                f"{where}.function.parameters",
                "a JSON schema (an object)",
            )
        if "strict" in function and function["strict"] is not None:
            _type(function["strict"], bool, f"{where}.function.strict", "a boolean")
        names.add(name)
    return names


def _tool_choice(choice: Any, names: set[str]) -> None:
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            raise RequestError(
                "tool_choice", f"must be 'none', 'auto', 'required' or a named tool, got {choice!r}"
            )
        return
    _object(choice, "tool_choice", {"type", "function"}, ("type", "function"))
    if choice["type"] != "function":
        raise RequestError("tool_choice.type", f"must be 'function', got {choice['type']!r}")
    function = _object(choice["function"], "tool_choice.function", {"name"}, ("name",))
    if function["name"] not in names:
        raise RequestError(
            "tool_choice.function.name", f"names no tool of the request: {function['name']!r}"
        )


# -- the request --------------------------------------------------------------------------------
def _stop(value: Any) -> None:
    if isinstance(value, str):
        return
    for i, item in enumerate(_list(value, "stop", high=4)):
        _type(item, str, f"stop[{i}]", "a string")


def _response_format(value: Any) -> None:
    fmt = _object(value, "response_format", {"type", "json_schema"}, ("type",))
    if fmt["type"] not in ("text", "json_object", "json_schema"):
        raise RequestError(
            "response_format.type", f"must be text, json_object or json_schema, got {fmt['type']!r}"
        )
    if fmt["type"] == "json_schema":
        _type(fmt.get("json_schema"), dict, "response_format.json_schema", "an object")


def _unguarded(key: str) -> Callable[[Any], None]:
    def refuse(value: Any) -> None:
        raise RequestError(key, UNGUARDED[key])

    return refuse


def _one_choice(value: Any) -> None:
    _type(value, int, "n", "an integer")
    if value != 1:
        raise RequestError("n", f"only one choice per request is supported (n=1): the gateway guards one reply, got {value}")  # fmt: skip


def _no_logprobs(value: Any) -> None:
    _type(value, bool, "logprobs", "a boolean")
    if value:
        raise RequestError("logprobs", "is not supported: log-probabilities carry the reply's tokens past the output defenses")  # fmt: skip


def _no_top_logprobs(value: Any) -> None:
    _type(value, int, "top_logprobs", "an integer")
    if value:
        raise RequestError("top_logprobs", "is not supported (see logprobs)")


def _modalities(value: Any) -> None:
    if _list(value, "modalities") != ["text"]:
        raise RequestError(
            "modalities", f"only ['text'] is supported: the defenses check text, got {value!r}"
        )


def _string_map(value: Any, param: str) -> None:
    for key, item in _type(value, dict, param, "an object").items():
        _type(item, str, f"{param}.{key}", "a string")


def _logit_bias(value: Any) -> None:
    for key, item in _type(value, dict, "logit_bias", "an object").items():
        _number(item, f"logit_bias.{key}", -100, 100)


FIELDS: dict[str, Callable[[Any], None]] = {
    "temperature": lambda v: _number(v, "temperature", 0, 2),
    "top_p": lambda v: _number(v, "top_p", 0, 1),
    "presence_penalty": lambda v: _number(v, "presence_penalty", -2, 2),
    "frequency_penalty": lambda v: _number(v, "frequency_penalty", -2, 2),
    "seed": lambda v: _type(v, int, "seed", "an integer"),
    "stop": _stop,
    "parallel_tool_calls": lambda v: _type(v, bool, "parallel_tool_calls", "a boolean"),
    "response_format": _response_format,
    "user": lambda v: _type(v, str, "user", "a string"),
    "store": lambda v: _type(v, bool, "store", "a boolean"),
    "metadata": lambda v: _string_map(v, "metadata"),
    "service_tier": lambda v: _type(v, str, "service_tier", "a string"),
    "reasoning_effort": lambda v: _type(v, str, "reasoning_effort", "a string"),
    "logit_bias": _logit_bias,
    "n": _one_choice,
    "logprobs": _no_logprobs,
    "top_logprobs": _no_top_logprobs,
    "modalities": _modalities,
    **{key: _unguarded(key) for key in UNGUARDED},
}


def validate_request(
    body: Any, *, max_messages: int, max_tokens: int, model: str | None = None
) -> dict[str, Any]:
    """The request to forward: `body` checked field by field (see the module), with the model
    set (the configured one, else the client's) and `max_tokens` defaulted to the limit. The
    caller's `body` is not changed."""
    check_scalar(max_messages, "max_messages", int, low=1)
    check_scalar(max_tokens, "max_tokens", int, low=1)
    if model is not None and (not isinstance(model, str) or not model):
        raise TypeError(f"model must be None or a non-empty string, got {model!r}"[:200])
    _type(body, dict, None, "a JSON object (the request body)")
    if depth(body) > MAX_DEPTH:
        raise RequestError(None, f"the request body nests deeper than {MAX_DEPTH} levels")
    messages = _list(body.get("messages"), "messages", low=1) if "messages" in body else None
    if messages is None:
        raise RequestError("messages", "is required")
    if len(messages) > max_messages:
        raise RequestError(
            "messages", f"holds {len(messages)} messages, over the limit of {max_messages}"
        )
    for i, message in enumerate(messages):
        _message(message, f"messages[{i}]")
    chosen = model or body.get("model")
    if not isinstance(chosen, str) or not chosen:
        raise RequestError("model", "must name a model (a non-empty string)")
    if "stream" in body and body["stream"] is not None:
        _type(body["stream"], bool, "stream", "true or false")
    if body.get("stream_options") is not None:
        if not body.get("stream"):
            raise RequestError("stream_options", "is only allowed when stream is true")
        options = _object(body["stream_options"], "stream_options", {"include_usage"})
        if "include_usage" in options:
            _type(options["include_usage"], bool, "stream_options.include_usage", "a boolean")
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None:
            _type(value, int, key, f"an integer in [1, {max_tokens}]")
            if not 1 <= value <= max_tokens:
                raise RequestError(key, f"must be an integer in [1, {max_tokens}], got {value!r}")
    names = _tools(body["tools"]) if body.get("tools") is not None else set()
    if body.get("tool_choice") is not None:
        _tool_choice(body["tool_choice"], names)
    for key, check in FIELDS.items():
        if body.get(key) is not None:
            check(body[key])
    out = {**body, "model": chosen}
    if body.get("max_tokens") is None and body.get("max_completion_tokens") is None:
        out["max_tokens"] = max_tokens
    return out
