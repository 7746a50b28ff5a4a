"""Tool schemas from signatures and docstrings; validation with jsonschema; the call format."""

import enum
from typing import Literal

import pytest
from paperplug_llm import Tool, ToolArgumentError, as_tools, parse_tool_calls, tool
from paperplug_llm.tool_calls import forced_call_prefix, read_arguments, render_for_template


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


def weather(city: str, days: int = 1, unit: Unit = Unit.C, hourly: bool | None = None) -> str:
    """Forecast for a city.

    Args:
        city: the city name
        days (int): how many days ahead
    """
    return f"{city}:{days}"


def test_schema_from_signature_and_docstring():
    t = Tool(weather)
    assert t.name == "weather" and t.description == "Forecast for a city."
    assert t.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "the city name"},
            "days": {"type": "integer", "description": "how many days ahead", "default": 1},
            "unit": {"enum": ["celsius", "fahrenheit"]},
            "hourly": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert t.spec()["function"]["name"] == "weather"


def test_container_and_literal_hints_and_sphinx_docstrings():
    @tool(name="pick")
    def f(xs: list[float], pair: tuple[int, str], mode: Literal["a", "b"], tags: dict[str, int]):
        """Pick.

        :param xs: numbers
        """

    props = f.parameters["properties"]
    assert props["xs"] == {"type": "array", "items": {"type": "number"}, "description": "numbers"}
    assert props["pair"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert props["mode"] == {"enum": ["a", "b"]}
    assert props["tags"] == {"type": "object", "additionalProperties": {"type": "integer"}}


def test_validation_rejects_wrong_types_and_names_the_field():
    t = Tool(weather)
    assert t(city="Oslo", days=2) == "Oslo:2"
    args = {"city": "Oslo", "days": "two"}
    with pytest.raises(ToolArgumentError, match="days: 'two' is not of type 'integer'"):
        t.validate(args)
    assert args == {"city": "Oslo", "days": "two"}  # untouched
    with pytest.raises(ToolArgumentError, match="'city' is a required property"):
        t.validate({})
    with pytest.raises(ToolArgumentError, match="unexpected"):
        t.validate({"city": "x", "extra": 1})
    with pytest.raises(ToolArgumentError, match="JSON object"):
        t.validate("city=x")
    with pytest.raises(ToolArgumentError, match="is not one of"):
        t.validate({"city": "x", "unit": "kelvin"})


def test_bad_tools_are_rejected():
    with pytest.raises(TypeError, match="callable"):
        Tool(3)
    with pytest.raises(ValueError, match="tool name"):
        Tool(weather, name="has space")
    with pytest.raises(ValueError, match="two tools"):
        as_tools([weather, Tool(weather)])

    def g(x: object): ...

    with pytest.raises(TypeError, match="no JSON schema"):
        Tool(g)


def test_parse_and_format_tool_calls():
    text, calls = parse_tool_calls(
        'ok <tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call> <tool_call>{bad</tool_call>'
    )
    assert text == "ok" and calls[0].name == "f" and calls[0].arguments == {"x": 1}
    assert calls[1].name == "" and calls[1].arguments == "{bad"
    assert parse_tool_calls("no call") == ("no call", [])


def test_forced_prefix_and_argument_reading():
    params = Tool(weather).parameters
    assert (
        forced_call_prefix("weather", params)
        == '<tool_call>{"name": "weather", "arguments": {"city": '
    )
    assert read_arguments('{"city": "Oslo"}, "junk": 1}') == {"city": "Oslo"}
    assert read_arguments('{"city": ') == '{"city": '


def test_render_for_plain_templates():
    msgs = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "content": "42"},
    ]
    out = render_for_template(msgs, [Tool(weather).spec()])
    assert out[0]["role"] == "system" and '"name": "weather"' in out[0]["content"]
    assert out[2] == {
        "role": "assistant",
        "content": '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>',
    }
    assert out[3] == {"role": "user", "content": "<tool_response>\n42\n</tool_response>"}
