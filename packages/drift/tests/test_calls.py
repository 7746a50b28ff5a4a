"""The text protocol's calls: parsing, rendering, keys."""

import pytest
from paperplug_drift import Call, CallSyntaxError, parse_function_calls
from paperplug_drift.calls import as_call, extract_tag, render_calls


def test_parse_list_of_keyword_calls_and_bare_names():
    calls = parse_function_calls(
        '[send_money(recipient="GB29", amount=98.7, tags=["a"]), get_iban]'
    )
    assert calls == [
        Call("send_money", {"recipient": "GB29", "amount": 98.7, "tags": ["a"]}),
        Call("get_iban"),
    ]
    assert parse_function_calls("get_iban()") == [Call("get_iban")]
    assert (
        parse_function_calls("[]") == parse_function_calls("None") == parse_function_calls("") == []
    )


@pytest.mark.parametrize("bad", ["[f(1)]", "[f(**x)]", "[f(a=g())]", "[x.y()]", "[f(a=1"])
def test_parse_rejects_what_is_not_a_keyword_call(bad):
    with pytest.raises(CallSyntaxError):
        parse_function_calls(bad)


def test_render_round_trips_and_keys_ignore_argument_order():
    calls = [Call("f", {"a": 1, "b": "x"}), Call("g")]
    assert parse_function_calls(render_calls(calls)) == calls
    assert Call("f", {"a": 1, "b": 2}).key() == Call("f", {"b": 2, "a": 1}).key()
    assert Call("f", {"a": 1}).key() != Call("f", {"a": 2}).key()


def test_as_call_reads_every_shape():
    openai = {"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    assert as_call(openai) == as_call({"function": "f", "args": {"a": 1}}) == Call("f", {"a": 1})
    with pytest.raises(TypeError, match="cannot read"):
        as_call(42)
    with pytest.raises(CallSyntaxError, match="not JSON"):
        as_call({"name": "f", "arguments": "{oops"})
    assert extract_tag("x <a> y </a>", "a") == "y" and extract_tag("x", "a") is None
