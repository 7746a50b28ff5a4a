"""Every request is validated before any defense or the upstream sees it: a violation is a 400
in OpenAI's error format naming the parameter by its path, raised by the official SDK as
`BadRequestError` from that very request, never a 500 and never forwarded; what the gateway
cannot guard (n > 1, logprobs, audio, non-text parts, the legacy functions API) is refused by
name; unknown top-level fields still pass through."""

import httpx
import openai
import pytest
from paperplug_gateway import create_app, parse_config
from paperplug_gateway.request import MAX_DEPTH, depth
from wire import REPLY, canned_upstream, client

USER = {"role": "user", "content": "hi"}
CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def nested(levels):
    value = 1
    for _ in range(levels):
        value = [value]
    return value


BAD = [
    ({"messages": []}, "messages", "must hold at least 1 items"),
    ({"messages": "hi"}, "messages", "must be a list, got a string"),
    ({"messages": [{"content": "no role"}]}, "messages[0].role", "is required"),
    ({"messages": [USER, {"role": "robot", "content": "x"}]}, "messages[1].role", "must be one of"),
    ({"messages": [{"role": 1, "content": "x"}]}, "messages[0].role", "must be one of"),
    ({"messages": [USER, {"role": "function", "name": "f", "content": "x"}]}, "messages[1].role", "legacy 'function' role"),
    ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content", "string or a list of text parts"),
    ({"messages": [{"role": "user", "content": {"text": "x"}}]}, "messages[0].content", "got an object"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}, "messages[0].content[0].type", "'image_url' parts are not accepted"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}, "messages[0].content[0].text", "must be a string"),
    ({"messages": [{"role": "user", "contents": "x", "content": "y"}]}, "messages[0].contents", "is not a field"),
    ({"messages": [USER, {"role": "assistant", "tool_calls": [1, 2]}]}, "messages[1].tool_calls[0]", "must be an object"),
    ({"messages": [USER, {"role": "assistant", "tool_calls": "abc"}]}, "messages[1].tool_calls", "must be a list"),
    ({"messages": [USER, {"role": "assistant", "content": None}]}, "messages[1].content", "got null"),
    ({"messages": [USER, {"role": "assistant", "tool_calls": [CALL]}, {"role": "tool", "content": "r"}]}, "messages[2].tool_call_id", "is required"),
    ({"messages": [USER, {"role": "assistant", "content": "x", "function_call": {"name": "f", "arguments": "{}"}}]}, "messages[1].function_call", "not supported"),
    ({"messages": [USER], "tools": 5}, "tools", "must be a list, got an integer"),
    ({"messages": [USER], "tools": "abc"}, "tools", "must be a list, got a string"),
    ({"messages": [USER], "tools": [{"type": "function", "function": {"name": "bad name"}}]}, "tools[0].function.name", "must match"),
    ({"messages": [USER], "tools": [{"type": "web_search"}]}, "tools[0].function", "is required"),
    ({"messages": [USER], "tools": [TOOL], "tool_choice": {"type": "function", "function": {"name": "g"}}}, "tool_choice.function.name", "names no tool"),
    ({"messages": [USER], "temperature": "hot"}, "temperature", "got a string"),
    ({"messages": [USER], "temperature": 2.5}, "temperature", "in [0, 2]"),
    ({"messages": [USER], "top_p": True}, "top_p", "got a boolean"),
    ({"messages": [USER], "stream": "yes"}, "stream", "true or false"),
    ({"messages": [USER], "stream": 1}, "stream", "got an integer"),
    ({"messages": [USER], "stream_options": {"include_usage": True}}, "stream_options", "only allowed when stream"),
    ({"messages": [USER], "max_tokens": 0}, "max_tokens", r"in [1, 4096], got 0"),
    ({"messages": [USER], "max_tokens": "5"}, "max_tokens", "got a string"),
    ({"messages": [USER], "max_completion_tokens": 1.5}, "max_completion_tokens", "got a number"),
    ({"messages": [USER], "n": 2}, "n", "only one choice per request"),
    ({"messages": [USER], "logprobs": True}, "logprobs", "not supported"),
    ({"messages": [USER], "top_logprobs": 3}, "top_logprobs", "not supported"),
    ({"messages": [USER], "functions": [{"name": "f"}]}, "functions", "legacy functions API"),
    ({"messages": [USER], "function_call": "auto"}, "function_call", "legacy functions API"),
    ({"messages": [USER], "audio": {"voice": "alloy", "format": "wav"}}, "audio", "text only"),
    ({"messages": [USER], "modalities": ["text", "audio"]}, "modalities", "only ['text']"),
    ({"messages": [USER], "stop": ["a", 1]}, "stop[1]", "must be a string"),
    ({"messages": [USER], "seed": 1.5}, "seed", "must be an integer"),
    ({"messages": [USER], "model": ""}, "model", "must name a model"),
    ({"messages": [USER], "model": 7}, "model", "must name a model"),
    ({"messages": [USER], "extra": nested(MAX_DEPTH + 5)}, None, f"nests deeper than {MAX_DEPTH}"),
]  # fmt: skip


@pytest.fixture
def gateway_and_log(serve):
    log = []
    up = serve(canned_upstream(plain=REPLY, log=log))
    return serve(create_app(parse_config({"upstream": {"url": up}}))), log


@pytest.mark.parametrize(("body", "param", "fragment"), BAD)
def test_a_malformed_request_is_a_400_naming_the_parameter_and_never_forwarded(
    gateway_and_log, body, param, fragment
):
    url, log = gateway_and_log
    body = {"model": "m", **body}
    response = httpx.post(f"{url}/chat/completions", json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["param"], error["type"], error["code"]) == (param, "invalid_request_error", 400)
    assert fragment in error["message"] and error["message"].startswith(param or "")
    # the official SDK raises BadRequestError from this very request
    with pytest.raises(openai.BadRequestError) as info:
        client(url).post("/chat/completions", body=body, cast_to=httpx.Response)
    assert info.value.body["param"] == param
    assert log == []  # the upstream saw none of them


def test_a_body_nested_past_the_interpreters_limit_is_a_400_not_a_500(gateway_and_log):
    url, log = gateway_and_log
    response = httpx.post(
        f"{url}/chat/completions",
        content=b"[" * 200_000,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400 and response.json()["error"]["message"] == (
        "the request body is not JSON"
    )
    assert log == []


def test_depth_counts_levels_without_recursion():
    assert depth(1) == 0 and depth([]) == 1 and depth({"a": [{"b": []}]}) == 4
    assert depth(nested(100_000)) == MAX_DEPTH + 1  # stops looking past the limit


def test_what_clients_send_passes_and_unknown_top_level_fields_are_forwarded(gateway_and_log):
    url, log = gateway_and_log
    sdk_turn = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [CALL],
                "function_call": None, "audio": None, "annotations": []}  # fmt: skip
    body = {
        "model": "m",
        "messages": [
            {"role": "developer", "content": [{"type": "text", "text": "be brief"}]},
            USER,
            sdk_turn,
            {"role": "tool", "tool_call_id": "c1", "content": "result"},
        ],
        "tools": [TOOL],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "temperature": 0,
        "n": 1,
        "logprobs": False,
        "stop": ["END"],
        "vendor_option": {"keep": True},
    }
    answer = client(url).chat.completions.create(**{k: v for k, v in body.items() if k != "vendor_option"},
                                                 extra_body={"vendor_option": {"keep": True}})  # fmt: skip
    assert answer.choices[0].message.content == "ok"
    (sent,) = log
    assert sent["vendor_option"] == {"keep": True} and sent["messages"] == body["messages"]
    assert sent["max_tokens"] == 4096  # the default max_tokens: the configured limit


def test_the_default_max_tokens_is_the_configured_limit_and_a_clients_own_is_kept(serve):
    log = []
    up = serve(canned_upstream(plain=REPLY, log=log))
    url = serve(create_app(parse_config({"upstream": {"url": up}, "server": {"max_tokens": 77}})))
    sdk = client(url)
    sdk.chat.completions.create(model="m", messages=[USER])
    sdk.chat.completions.create(model="m", messages=[USER], max_tokens=5)
    sdk.chat.completions.create(model="m", messages=[USER], max_completion_tokens=6)
    assert [(b.get("max_tokens"), b.get("max_completion_tokens")) for b in log] == [
        (77, None),
        (5, None),
        (None, 6),
    ]
