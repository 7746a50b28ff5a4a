"""The OpenAI wire contract through the gateway, with the official `openai` SDK: plain and
streamed replies, tools and tool calls, the output guard stopping a stream with a refusal and
`finish_reason: "content_filter"`, models, health, and errors the SDK raises."""

import os

import pytest
from wire import client, streamed

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "send_money",
            "description": "Send money.",
            "parameters": {
                "type": "object",
                "properties": {"recipient": {"type": "string"}, "amount": {"type": "number"}},
            },
        },
    }
]


def reply(messages, tools):
    text = messages[-1]["content"] if isinstance(messages[-1]["content"], str) else ""
    if "pay" in text and tools:
        return {
            "content": "",
            "tool_calls": [
                {"name": "send_money", "arguments": {"recipient": "GB29", "amount": 10}}
            ],
        }
    if "secret" in text:
        return {"content": "Sure, the password is hunter2 and the rest follows"}
    return {"content": f"You said: {text}"}


@pytest.fixture
def url(gateway):
    return gateway(reply, defense=[{"name": "regex-guard"}])[0]


def test_a_plain_reply_passes_the_guard_untouched(url):
    answer = client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hello"}]
    )
    assert answer.choices[0].message.content == "You said: hello"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.model == "m" and answer.object == "chat.completion"


def test_a_streamed_reply_arrives_in_pieces_and_whole(url):
    stream = client(url).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "one two three"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, finish, chunks = streamed(stream)
    assert text == "You said: one two three" and finish == "stop"
    assert sum(bool(c.choices and c.choices[0].delta.content) for c in chunks) == 5  # a word each
    assert chunks[-1].usage is not None and chunks[-1].choices == []


def test_the_output_guard_stops_a_stream_before_the_match_and_refuses(url):
    stream = client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "the secret"}], stream=True
    )
    text, finish, _ = streamed(stream)
    assert finish == "content_filter"
    assert "password" not in text and "hunter2" not in text
    assert text == "Sure, the \nI can't help with that. [blocked by regex-guard]"


def test_a_plain_reply_that_fails_the_output_guard_is_replaced(url):
    answer = client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "the secret"}]
    )
    assert answer.choices[0].message.content == "I can't help with that. [blocked by regex-guard]"
    assert answer.choices[0].finish_reason == "content_filter"


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_come_back_as_tool_calls(url, stream):
    kw = {"model": "m", "messages": [{"role": "user", "content": "pay the bill"}], "tools": TOOLS}
    if stream:
        _, finish, chunks = streamed(client(url).chat.completions.create(stream=True, **kw))
        calls = [
            c for chunk in chunks if chunk.choices for c in chunk.choices[0].delta.tool_calls or ()
        ]
        assert finish == "tool_calls"
    else:
        answer = client(url).chat.completions.create(**kw)
        calls = answer.choices[0].message.tool_calls
        assert answer.choices[0].finish_reason == "tool_calls"
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        ("send_money", '{"recipient": "GB29", "amount": 10}')
    ]


def test_models_health_and_metrics(url):
    import httpx

    assert [m.id for m in client(url).models.list()] == ["scripted"]
    assert httpx.get(url.replace("/v1", "/healthz")).json() == {
        "status": "ok",
        "pid": os.getpid(),
        "defenses": ["regex-guard"],
    }
    client(url).chat.completions.create(model="m", messages=[{"role": "user", "content": "secret"}])
    metrics = httpx.get(url.replace("/v1", "/metrics")).text
    assert 'paperplug_gateway_blocked_total{defense="regex-guard",stage="output"} 1.0' in metrics
    assert 'paperplug_gateway_requests_total{endpoint="chat",status="200"} 1.0' in metrics
