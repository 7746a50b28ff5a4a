"""The reply the client gets is rebuilt from what the defenses checked: a blocked reply lets
nothing of the upstream's text out through `reasoning_content`, `logprobs`, `refusal`, a
legacy `function_call` or a second choice, plain or streamed (read as raw bytes, not through
the SDK's parsing). An upstream that breaks the format is a 502 or an SSE error event, never a
500 or a torn connection; its 429 reaches the client as a 429 with its `Retry-After`; its
stream is closed as soon as the gateway stops reading it."""

import json
import time

import httpx
import openai
import pytest
from paperplug_gateway import create_app, parse_config
from wire import canned_upstream, client, raw_sse

SECRET = "the password is hunter2"
USER = [{"role": "user", "content": "hi"}]
LEAKY_MESSAGE = {
    "role": "assistant",
    "content": SECRET,
    "reasoning_content": f"thinking: {SECRET}",
    "refusal": f"refusing {SECRET}",
    "function_call": {"name": "leak", "arguments": json.dumps({"text": SECRET})},
    "audio": {"id": "a", "data": "aGkK", "transcript": SECRET},
}
LEAKY = {
    "id": "up-1",
    "object": "chat.completion",
    "created": 5,
    "model": "up",
    "system_fingerprint": SECRET,
    "choices": [
        {"index": 0, "message": LEAKY_MESSAGE, "finish_reason": "stop",
         "logprobs": {"content": [{"token": w, "logprob": -0.1} for w in SECRET.split()]}},
        {"index": 1, "message": {"role": "assistant", "content": SECRET}, "finish_reason": "stop"},
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8, "note": SECRET},
}  # fmt: skip


def ev(delta, finish=None, index=0, **extra):
    choice = {"index": index, "delta": delta, "finish_reason": finish, **extra}
    return json.dumps({"id": "up-1", "object": "chat.completion.chunk", "created": 5,
                       "model": "up", "choices": [choice]})  # fmt: skip


LEAKY_EVENTS = [
    ev({"role": "assistant", "content": ""}),
    ev({"reasoning_content": f"thinking: {SECRET}"}),
    ev({"content": "the "}, logprobs={"content": [{"token": "password", "logprob": -1}]}),
    ev({"content": SECRET}, index=1),
    ev({"content": "password "}),
    ev({"content": "is hunter2"}),
    ev({}, "stop"),
]


def start(serve, defense=("regex-guard",), **upstream):
    log = []
    up = serve(canned_upstream(log=log, **upstream))
    config = {"upstream": {"url": up}, "defense": [{"name": d} for d in defense]}
    return serve(create_app(parse_config(config))), log


@pytest.mark.parametrize("defense", [("regex-guard",), ()])
def test_a_plain_reply_carries_only_checked_fields(serve, defense):
    url, _ = start(serve, defense, plain=LEAKY)
    raw = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": USER})
    assert raw.status_code == 200
    body = raw.json()
    assert set(body) == {"id", "object", "created", "model", "choices", "usage"}
    (choice,) = body["choices"]
    assert set(choice["message"]) == {"role", "content", "refusal"} and choice["logprobs"] is None
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    assert (body["id"], body["created"], body["model"]) == ("up-1", 5, "up")
    if defense:  # blocked: not one word of the upstream's text anywhere in the bytes
        assert "hunter2" not in raw.text and choice["finish_reason"] == "content_filter"
    else:  # passed: the text, and nothing else of what the upstream sent
        assert raw.text.count("hunter2") == 1 and choice["message"]["content"] == SECRET


def test_a_blocked_stream_lets_out_no_reasoning_logprobs_or_second_choice(serve):
    url, _ = start(serve, events=LEAKY_EVENTS)
    status, raw = raw_sse(url, {"model": "m", "messages": USER, "stream": True})
    assert status == 200
    text = raw.decode()
    assert "hunter2" not in text and "password" not in text and "reasoning" not in text
    assert '"finish_reason": "content_filter"' in text


def test_sse_framing_as_raw_bytes(serve):
    url, _ = start(serve, (), events=[ev({"role": "assistant", "content": ""}),
                                      ev({"content": "one "}), ev({"content": "two"}), ev({}, "stop")])  # fmt: skip
    status, raw = raw_sse(url, {"model": "m", "messages": USER, "stream": True})
    events = raw.decode().split("\n\n")
    assert status == 200 and events[-2:] == ["data: [DONE]", ""]
    assert all(e.startswith("data: ") and "\n" not in e for e in events[:-1])
    chunks = [json.loads(e[6:]) for e in events[:-2]]
    assert [c["choices"][0]["delta"] for c in chunks] == [
        {"role": "assistant", "content": ""},
        {"content": "one "},
        {"content": "two"},
        {},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["object"] == "chat.completion.chunk" and c["id"] == "up-1" for c in chunks)


@pytest.mark.parametrize(
    ("message", "where"),
    [
        (None, "choices[0].message"),
        ({"role": "assistant", "content": 5}, "choices[0].message.content"),
        ({"role": "assistant", "content": "x", "tool_calls": "call"}, "choices[0].message.tool_calls"),
        ({"role": "assistant", "tool_calls": [{"function": {"name": 3}}]}, "choices[0].message.tool_calls[0].function"),
    ],
)  # fmt: skip
def test_a_plain_reply_of_the_wrong_shape_is_a_502(serve, message, where):
    reply = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    url, _ = start(serve, plain=reply)
    with pytest.raises(openai.APIStatusError) as info:
        client(url).chat.completions.create(model="m", messages=USER)
    assert info.value.status_code == 502 and info.value.message.endswith(where)
    for body in ([], {"choices": "x"}, {"choices": []}):
        url, _ = start(serve, plain=body)
        response = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": USER})
        assert response.status_code == 502 and response.json()["error"]["type"] == "upstream_error"


GOOD = [ev({"role": "assistant", "content": ""}), ev({"content": "a "}), ev({"content": "b "})]


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (json.dumps({"choices": "x"}), "choices"),
        (ev("a string delta"), "choices[0].delta"),
        (ev({"content": 7}), "choices[0].delta.content"),
        (ev({"tool_calls": [{"index": "0", "function": {}}]}), "choices[0].delta.tool_calls[0]"),
        (json.dumps([1, 2]), "malformed event"),
    ],
)
@pytest.mark.parametrize("defense", [("regex-guard",), ()])
def test_a_bad_chunk_after_good_ones_ends_the_stream_with_an_error_event(
    serve, bad, where, defense
):
    url, _ = start(serve, defense, events=[*GOOD, bad, ev({"content": "never"})])
    status, raw = raw_sse(
        url, {"model": "m", "messages": USER, "stream": True}
    )  # no torn connection
    events = raw.decode().strip().split("\n\n")
    assert status == 200 and events[-1].startswith("data: {")
    error = json.loads(events[-1][6:])["error"]
    assert error["type"] == "upstream_error" and error["code"] == 502 and where in error["message"]
    assert "never" not in raw.decode() and "a b" in "".join(
        json.loads(e[6:])["choices"][0]["delta"].get("content", "") for e in events[:-1]
    )
    with pytest.raises(openai.APIError, match=where.split("[")[0]):  # the SDK raises it
        list(client(url).chat.completions.create(model="m", messages=USER, stream=True))


def test_an_audit_write_that_fails_mid_stream_ends_with_an_error_event(serve, tmp_path):
    up = serve(canned_upstream(events=[*GOOD, ev({}, "stop")]))
    audit = tmp_path / "a-directory"
    audit.mkdir()  # appending to it fails
    config = {"upstream": {"url": up}, "defense": [{"name": "regex-guard"}], "audit": {"path": str(audit)}}  # fmt: skip
    url = serve(create_app(parse_config(config)))
    status, raw = raw_sse(url, {"model": "m", "messages": USER, "stream": True})
    last = json.loads(raw.decode().strip().split("\n\n")[-1][6:])
    assert status == 200 and last["error"]["type"] == "server_error"
    assert "Traceback" not in raw.decode() and str(audit) not in raw.decode()


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_429_is_a_429_with_its_retry_after(serve, stream):
    error = {"error": {"message": "slow down", "type": "rate_limit"}}
    url, _ = start(serve, plain=error, status=429, headers={"Retry-After": "7"})
    with pytest.raises(openai.RateLimitError) as info:
        out = client(url).chat.completions.create(model="m", messages=USER, stream=stream)
        list(out) if stream else out
    assert info.value.status_code == 429 and info.value.response.headers["retry-after"] == "7"
    url, _ = start(serve, plain={"error": {"message": "boom"}}, status=500)
    with pytest.raises(openai.InternalServerError) as info:
        list(client(url).chat.completions.create(model="m", messages=USER, stream=True))
    assert info.value.status_code == 502 and "retry-after" not in info.value.response.headers


def test_the_upstream_stream_is_closed_as_soon_as_the_gateway_stops_reading(serve):
    events = [
        ev({"role": "assistant", "content": ""}),
        ev({"content": "my "}),
        ev({"content": "password "}),
    ]
    events += [x for i in range(200) for x in (0.01, ev({"content": f"w{i} "}))]  # ~2 s more
    url, log = start(serve, events=events)
    t0 = time.perf_counter()
    text = "".join(c.choices[0].delta.content or "" for c in
                   client(url).chat.completions.create(model="m", messages=USER, stream=True) if c.choices)  # fmt: skip
    assert "[blocked by regex-guard]" in text and time.perf_counter() - t0 < 1.5
    deadline = time.monotonic() + 1.5
    while len(log) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert log[1]["closed_early"] and log[1]["sent"] < 50  # closed at once, not read to the end
