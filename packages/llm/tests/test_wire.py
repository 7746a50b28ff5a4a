"""Wire compatibility: the official `openai` SDK drives `paperplug-llm serve` (responses validated
against the SDK's own types), OpenAIChatModel reads an independent OpenAI-format server, and
AgentDojo's OpenAI pipeline element runs a banking task through the server."""

import http.client
import json
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest
from openai.types import Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from paperplug_llm import ChatServer, OpenAIChatModel, ScriptedChatModel
from paperplug_llm.openai_client import retry_after_seconds

from paperplug.testing import raw_request

CALL = '<tool_call>{"name": "add", "arguments": {"a": 17, "b": 25, "note": "a long enough argument"}}</tool_call>'
ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
    },
}


def echo(messages, **kw):
    if kw.get("tools") and messages[-1]["role"] == "user":
        return CALL
    return f"{messages[0]['role']}|{messages[-1]['role']}|{messages[-1]['content']}"


@pytest.fixture
def server():
    with ChatServer(ScriptedChatModel(echo), model_name="echo") as running:
        yield running


@pytest.fixture
def sdk(server):
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=10)


def validated(raw_response, model=ChatCompletion):
    return model.model_validate(json.loads(raw_response.text))


def test_what_real_clients_send_is_served_and_validates(sdk):
    raw = sdk.chat.completions.with_raw_response.create(
        model="echo",
        messages=[
            {"role": "developer", "content": [{"type": "text", "text": "be brief"}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}],
            },
        ],
        user="u1",
        parallel_tool_calls=False,
    )
    reply = validated(raw)
    assert reply.choices[0].message.content == "system|user|hi\nthere"
    assert reply.choices[0].finish_reason == "stop" and reply.object == "chat.completion"
    convo = [
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "add", "content": [{"type": "text", "text": "42"}]},
    ]  # fmt: skip
    assert sdk.chat.completions.create(model="echo", messages=convo).choices[0].message.content == (
        "user|tool|42"
    )


def test_models_endpoint_and_one_model(sdk):
    listed = sdk.models.list().data
    assert [m.id for m in listed] == ["echo"] and listed[0].created > 0
    Model.model_validate(sdk.models.retrieve("echo").model_dump())
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        sdk.models.retrieve("gpt-9")


def test_stream_with_usage_and_tool_calls_validates(server, sdk):
    chunks = list(
        sdk.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": "x"}],
            tools=[ADD],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    for c in chunks:
        ChatCompletionChunk.model_validate(c.model_dump())
    assert chunks[-1].choices == [] and "usage" in chunks[-1].model_fields_set
    calls = {}
    for c in chunks[:-1]:
        for part in c.choices[0].delta.tool_calls or []:
            slot = calls.setdefault(part.index, {"name": "", "arguments": ""})
            slot["name"] += part.function.name or ""
            slot["arguments"] += part.function.arguments or ""
    pieces = sum(len(c.choices[0].delta.tool_calls or []) for c in chunks[:-1])
    assert pieces > 2, "the arguments arrive split over several deltas"
    assert calls[0]["name"] == "add" and json.loads(calls[0]["arguments"])["a"] == 17
    assert [c.choices[0].finish_reason for c in chunks[:-1]][-1] == "tool_calls"
    ours = OpenAIChatModel("echo", server.url, timeout=10)
    done = ours.complete([{"role": "user", "content": "x"}], tools=[ADD], stream=True)
    assert done.finish_reason == "tool_calls"
    assert [(c.name, c.arguments["b"]) for c in done.tool_calls] == [("add", 25)]


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ({"n": 2}, "n=2 is not supported"),
        ({"top_logprobs": 3, "logprobs": True}, "top_logprobs"),
        ({"logprobs": True}, "does not report log-probabilities"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"frequency_penalty": 0.5}, "frequency_penalty"),
        ({"tools": [{"type": "function"}]}, r"tools\[0\]"),
        ({"tools": [{"type": "function", "function": {"name": ""}}]}, "name must be a non-empty"),
        ({"tools": [ADD], "tool_choice": {"type": "function", "function": {"name": "mul"}}}, "'mul'"),
        ({"tool_choice": "required"}, "needs tools"),
        ({"messages": [{"role": "assistant", "content": None, "tool_calls": [{"type": "function"}]}]},
         "function.name"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
         "only text parts"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "role"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"temperature": 3}, "temperature"),
        ({"stream_options": {"include_usage": True}}, "only allowed when stream"),
    ],
)  # fmt: skip
def test_malformed_or_unsupported_requests_are_400(sdk, extra, match):
    body = {"model": "echo", "messages": [{"role": "user", "content": "x"}], **extra}
    with pytest.raises(openai.BadRequestError, match=match):
        sdk.chat.completions.create(**body)


def test_unknown_fields_and_bad_json_are_400(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    for body in (
        b"{not json",
        json.dumps({"messages": [{"role": "user", "content": "x"}], "frobnicate": 1}).encode(),
    ):
        conn.request(
            "POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"}
        )
        resp = conn.getresponse()
        assert (
            resp.status == 400
            and json.loads(resp.read())["error"]["type"] == "invalid_request_error"
        )
    conn.close()


def _raw(server, method, headers, body=b""):
    path = "/v1/chat/completions" if method != "GET" else "/v1/models"
    return raw_request(server.url, method, path, headers, body)


BODY = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "x"}]}).encode()


@pytest.mark.parametrize(
    ("method", "headers", "status", "param"),
    [
        ("POST", {"Content-Type": "text/plain"}, 415, "content-type"),  # a page's simple request
        ("POST", {}, 415, "content-type"),
        ("POST", {"Content-Type": "application/json", "Origin": "https://evil.example"}, 403, "origin"),
        ("POST", {"Content-Type": "application/json", "Host": "evil.example:8000"}, 403, "host"),
        ("GET", {"Host": "rebound.evil.example"}, 403, "host"),
        ("OPTIONS", {"Origin": "https://evil.example"}, 403, "origin"),
    ],
)  # fmt: skip
def test_the_door_refuses_what_a_web_page_can_send(server, method, headers, status, param):
    got, body, response_headers = _raw(server, method, headers, BODY if method == "POST" else b"")
    assert (got, body["error"]["param"]) == (status, param)
    assert "Access-Control-Allow-Origin" not in response_headers
    assert server.model.calls == []  # the model never saw it


def test_an_allowed_origin_is_served_with_cors_headers():
    with ChatServer(ScriptedChatModel(echo), model_name="echo",
                    allowed_origins=("https://my.app",)) as server:  # fmt: skip
        origin = {"Origin": "https://my.app"}
        status, _, headers = _raw(server, "OPTIONS", origin)
        assert status == 204 and headers["Access-Control-Allow-Origin"] == "https://my.app"
        assert "POST" in headers["access-control-allow-methods"]
        status, body, headers = _raw(
            server, "POST", {**origin, "Content-Type": "application/json"}, BODY
        )
        assert status == 200 and body["choices"][0]["message"]["content"] == "user|user|x"
        assert headers["Access-Control-Allow-Origin"] == "https://my.app"


def test_finish_reason_length_plain_and_streamed(tiny):
    with ChatServer(tiny, model_name="tiny") as running:
        sdk = openai.OpenAI(base_url=running.url, api_key="none", max_retries=0)
        msgs = [{"role": "user", "content": "tell me a long story"}]
        plain = validated(
            sdk.chat.completions.with_raw_response.create(model="tiny", messages=msgs, max_tokens=3)
        )
        assert plain.choices[0].finish_reason == "length" and plain.usage.completion_tokens == 3
        logged = sdk.chat.completions.create(
            model="tiny", messages=msgs, max_tokens=3, logprobs=True
        )
        assert len(logged.choices[0].logprobs.content) == 3
        chunks = list(
            sdk.chat.completions.create(model="tiny", messages=msgs, max_tokens=3, stream=True)
        )
        assert chunks[-1].choices[0].finish_reason == "length"
        assert (
            "".join(c.choices[0].delta.content or "" for c in chunks)
            == plain.choices[0].message.content
        )


def test_a_client_leaving_mid_stream_leaves_no_traceback(capfd):
    def slow_words(messages, **kw):
        return " ".join(["word"] * 3000)

    class Slow(ScriptedChatModel):
        def stream(self, messages, **kw):
            reply = super().stream(messages, **kw)
            for piece in reply:
                time.sleep(0.0005)
                yield piece

    with ChatServer(Slow(slow_words)) as running:
        body = json.dumps({"messages": [{"role": "user", "content": "x"}], "stream": True}).encode()
        sock = socket.create_connection(("127.0.0.1", running.port), timeout=5)
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert b"200" in sock.recv(200)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # reset mid-stream
        time.sleep(1.5)
        ok = OpenAIChatModel("m", running.url, timeout=10).chat([{"role": "user", "content": "y"}])
        assert ok.startswith("word")  # the server still serves
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "BrokenPipe" not in captured.err


def test_clients_at_once_are_served_in_arrival_order():
    order = []

    def slow(messages, **kw):
        order.append(messages[-1]["content"])
        time.sleep(0.3)
        return f"re: {messages[-1]['content']}"

    with ChatServer(ScriptedChatModel(slow)) as running:
        replies = {}

        def ask(i):
            replies[i] = OpenAIChatModel("m", running.url, timeout=10).chat(
                [{"role": "user", "content": str(i)}]
            )

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(3)]
        start = time.perf_counter()
        for t in threads:
            t.start()
            time.sleep(0.05)  # arrival order 0, 1, 2
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
    assert replies == {i: f"re: {i}" for i in range(3)} and order == ["0", "1", "2"]
    assert 0.85 < elapsed < 2.0, elapsed  # one at a time: about 3 x 0.3 s


def test_retry_after_as_an_http_date_is_honoured():
    assert retry_after_seconds("2.5") == 2.5
    now = 1_700_000_000.0
    assert retry_after_seconds(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(
        30, abs=1
    )
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: no wait
    assert retry_after_seconds("soon") is None
    hits = []

    class Busy(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            hits.append(time.time())
            if len(hits) == 1:
                self.send_response(429)
                self.send_header("Retry-After", formatdate(time.time() + 2, usegmt=True))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps(INDEPENDENT_REPLY).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with independent_server(Busy) as url:
        assert (
            OpenAIChatModel("m", url, backoff=0.01, timeout=10).chat(
                [{"role": "user", "content": "x"}]
            )
            == "ok"
        )
    assert (
        0.9 <= hits[1] - hits[0] <= 3.5
    )  # waited for the date (whole seconds), not the 0.01 s backoff


INDEPENDENT_REPLY = {"id": "1", "object": "chat.completion", "created": 1, "model": "m",
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}  # fmt: skip


class independent_server:
    """An OpenAI-format server written from the wire format alone (not our ChatServer)."""

    def __init__(self, handler):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_tool_call_deltas_from_an_independent_server_are_assembled():
    events = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"ci'}}]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Oslo"}'}}]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}},
    ]  # fmt: skip

    class Streaming(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for e in events:
                self.wfile.write(b"data: " + json.dumps(e).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")

    with independent_server(Streaming) as url:
        model = OpenAIChatModel("m", url, timeout=10)
        stream = model.stream([{"role": "user", "content": "weather?"}])
        assert list(stream) == []
        done = stream.completion
        assert [(c.id, c.name, c.arguments) for c in done.tool_calls] == [
            ("call_a", "get_weather", {"city": "Oslo"}),
            ("call_b", "add", {"a": 1}),
        ]
        assert done.finish_reason == "tool_calls" and done.usage["total_tokens"] == 14


def test_serve_refuses_a_public_address_before_loading_a_model():
    start = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "paperplug_llm.cli",
            "serve",
            "--host",
            "0.0.0.0",
            "--model",
            "hf:/no/such/model",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "loopback" in out.stderr and "no/such" not in out.stderr
    assert time.perf_counter() - start < 20


def test_agentdojo_openai_pipeline_runs_a_banking_task_through_the_server():
    from agentdojo.agent_pipeline import (
        AgentPipeline,
        InitQuery,
        OpenAILLM,
        SystemMessage,
        ToolsExecutionLoop,
        ToolsExecutor,
    )
    from agentdojo.task_suite.load_suites import get_suite

    suite = get_suite("v1.2", "banking")
    task = suite.user_tasks["user_task_0"]
    plan = task.ground_truth(suite.load_and_inject_default_environment({}))

    def replay(messages, **kw):  # calls the ground-truth tools one per turn, then answers
        done = sum(m["role"] == "tool" for m in messages)
        if done < len(plan):
            call = {"name": plan[done].function, "arguments": dict(plan[done].args)}
            return f"<tool_call>{json.dumps(call)}</tool_call>"
        return "The bill is paid."

    with ChatServer(ScriptedChatModel(replay), model_name="replay") as running:
        client = openai.OpenAI(base_url=running.url, api_key="none", max_retries=0)
        llm = OpenAILLM(client, "replay")
        pipeline = AgentPipeline(
            [SystemMessage("You are a banking assistant."), InitQuery(), llm,
             ToolsExecutionLoop([ToolsExecutor(), llm])]
        )  # fmt: skip
        pipeline.name = "paperplug-llm-replay"
        utility, _ = suite.run_task_with_pipeline(pipeline, task, None, {})
    assert utility
    assert urllib.parse.urlsplit(running.url).hostname == "127.0.0.1"
