"""The HTTP client against real servers on 127.0.0.1: our ChatServer and a scripted faulty one."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from paperplug_llm import (
    ChatServer,
    LLMHTTPError,
    LLMResponseError,
    LLMTimeoutError,
    OpenAIChatModel,
    ScriptedChatModel,
    get_chat_model,
)

OK = {
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}
    ]
}
MSGS = [{"role": "user", "content": "hi there"}]


class FaultyServer:
    """Answers POSTs from a script of (status, body, delay_s); records each request body."""

    def __init__(self, script):
        self.script, self.requests = list(script), []
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                outer.requests.append(
                    json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                )
                status, body, delay = outer.script.pop(0) if outer.script else (200, OK, 0)
                if delay:
                    outer.release.wait(delay)  # stall (ended early when the test finishes)
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def client(url, **kw):
    return OpenAIChatModel("m", url, api_key="k", **{"timeout": 2.0, "backoff": 0.01, **kw})


def test_plain_and_streamed_replies_through_the_loopback_server(scripted_server):
    model = client(scripted_server.url)
    assert model.chat(MSGS) == "echo: hi there"
    pieces = list(model.stream(MSGS))
    assert len(pieces) > 1 and "".join(pieces) == "echo: hi there"
    assert model.complete(MSGS).finish_reason == "stop"


def test_stalled_server_raises_timeout_without_hanging():
    with FaultyServer([(200, OK, 30), (200, OK, 30)]) as server:
        start = time.perf_counter()
        with pytest.raises(LLMTimeoutError, match=r"within 0\.3 s"):
            client(server.url, timeout=0.3, max_retries=1).chat(MSGS)
        assert time.perf_counter() - start < 3 and len(server.requests) == 2  # one retry, bounded


def test_500_then_200_is_retried():
    with FaultyServer([(500, b"boom", 0), (503, b"busy", 0)]) as server:
        assert client(server.url, max_retries=2).chat(MSGS) == "fine"
        assert len(server.requests) == 3


def test_retries_are_bounded_and_4xx_is_not_retried():
    with FaultyServer([(429, b"slow down", 0)] * 3) as server:
        with pytest.raises(LLMHTTPError, match="429") as info:
            client(server.url, max_retries=1).chat(MSGS)
        assert info.value.status == 429 and len(server.requests) == 2
    with FaultyServer([(401, {"error": {"message": "bad key"}}, 0)]) as server:
        with pytest.raises(LLMHTTPError, match="401: bad key"):
            client(server.url).chat(MSGS)
        assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"<html>oops</html>", "not JSON"),
        ({"id": "x"}, "lacks choices"),
        ({"choices": []}, "lacks choices"),
    ],
)
def test_garbage_replies_raise_a_clear_error(body, match):
    with FaultyServer([(200, body, 0)]) as server, pytest.raises(LLMResponseError, match=match):
        client(server.url).chat(MSGS)


def test_request_carries_model_key_params_and_tools():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    reply = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"x": 1}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    with FaultyServer([(200, reply, 0)]) as server:
        done = client(server.url, temperature=0).complete(MSGS, tools=tools, seed=3)
        sent = server.requests[0]
    assert (
        sent["model"] == "m"
        and sent["tools"] == tools
        and sent["seed"] == 3
        and sent["temperature"] == 0
    )
    assert (
        done.text == ""
        and done.tool_calls[0].name == "f"
        and done.tool_calls[0].arguments == {"x": 1}
    )


def test_environment_configuration(monkeypatch, scripted_server):
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_server.url)
    monkeypatch.setenv("OPENAI_MODEL", "echo")
    model = OpenAIChatModel()
    assert model.base_url == scripted_server.url and model.chat(MSGS) == "echo: hi there"
    bare = OpenAIChatModel("m", scripted_server.url.removesuffix("/v1"))  # /v1 added to a bare host
    assert bare.chat(MSGS) == "echo: hi there"
    via_spec = get_chat_model(f"openai:echo@{scripted_server.url}")
    assert isinstance(via_spec, OpenAIChatModel) and via_spec.chat(MSGS) == "echo: hi there"


def test_bad_arguments_are_rejected(scripted_server):
    with pytest.raises(ValueError, match="base_url"):
        OpenAIChatModel("m", "ftp://x")
    with pytest.raises(ValueError, match="timeout"):
        OpenAIChatModel("m", "http://127.0.0.1:1", timeout=0)
    with pytest.raises(TypeError, match="messages"):
        client(scripted_server.url).chat("hi")
    with pytest.raises(ValueError, match="spec"):
        get_chat_model("gpt")


def test_unreachable_server_is_a_clear_error():
    from paperplug_llm import LLMError

    with pytest.raises(LLMError, match="cannot reach"):
        client("http://127.0.0.1:9", max_retries=1).chat(MSGS)


def test_server_reports_model_failures_and_bad_requests():
    import http.client

    def fail(messages, **kw):
        raise RuntimeError("model exploded")

    with ChatServer(ScriptedChatModel(fail)) as server:
        with pytest.raises(LLMHTTPError, match="500: RuntimeError: model exploded"):
            client(server.url, max_retries=0).chat(MSGS)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=2)
        conn.request(
            "POST",
            "/v1/chat/completions",
            body=b'{"messages": [{"role": "robot"}]}',
            headers={"Content-Type": "application/json"},
        )
        resp = conn.getresponse()
        assert resp.status == 400 and "role" in json.loads(resp.read())["error"]["message"]
        conn.close()
    with pytest.raises(ValueError, match="loopback"):
        ChatServer(ScriptedChatModel(["x"]), host="0.0.0.0")
