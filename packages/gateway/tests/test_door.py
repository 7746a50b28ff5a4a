"""The door, as a web page the user opens would try it against a keyless gateway on loopback:
a `text/plain` or form post (a CORS simple request), a foreign `Origin`, a rebound `Host`, a
preflight; and the routes' own refusals (405, 404) in OpenAI's format. Nothing refused reaches
the upstream; an allowed origin gets CORS headers, and the SDK (no Origin) passes."""

import json
import urllib.parse

import pytest
from paperplug_gateway import create_app, parse_config
from wire import REPLY, canned_upstream, client

from paperplug.testing import raw_request

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


@pytest.fixture
def door(serve):
    """(gateway URL, the upstream's request log) for a keyless loopback gateway allowing one
    web origin."""
    log = []
    up = serve(canned_upstream(plain=REPLY, log=log))
    config = {"upstream": {"url": up}, "server": {"allowed_origins": ["https://my.app"]}}
    return serve(create_app(parse_config(config))), log


CHAT = "/v1/chat/completions"
REFUSED = [
    ("POST", CHAT, {"Content-Type": "text/plain"}, 415, "content-type"),
    ("POST", CHAT, {"Content-Type": "text/plain;charset=UTF-8", "Origin": "null"}, 403, "origin"),
    ("POST", CHAT, {"Content-Type": "application/x-www-form-urlencoded"}, 415, "content-type"),
    ("POST", CHAT, {"Content-Type": "multipart/form-data; boundary=b"}, 415, "content-type"),
    ("POST", CHAT, {}, 415, "content-type"),
    ("POST", CHAT, {"Content-Type": "application/json", "Origin": "https://evil.example"}, 403, "origin"),
    ("POST", CHAT, {"Content-Type": "application/json", "Host": "evil.example"}, 403, "host"),
    ("POST", CHAT, {"Content-Type": "application/json", "Host": "127.0.0.1.evil.example:80"}, 403, "host"),
    ("GET", "/v1/models", {"Host": "rebound.evil.example"}, 403, "host"),
    ("GET", "/metrics", {"Origin": "https://evil.example"}, 403, "origin"),
    ("GET", "/metrics", {"Sec-Fetch-Site": "cross-site"}, 403, "sec-fetch-site"),
    ("OPTIONS", CHAT, {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, 403, "origin"),
    ("GET", CHAT, {}, 405, None),
    ("PUT", CHAT, {"Content-Type": "application/json"}, 405, None),
    ("GET", "/v1/nothing-here", {}, 404, None),
    ("POST", "/v1/completions", {"Content-Type": "application/json"}, 404, None),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "headers", "status", "param"), REFUSED)
def test_the_door_refuses_in_openai_format_and_forwards_nothing(
    door, method, path, headers, status, param
):
    url, log = door
    got, body, response_headers = raw_request(url, method, path, headers, BODY)
    assert got == status
    assert set(body) == {"error"} and body["error"]["param"] == param
    assert body["error"]["code"] == status and body["error"]["message"]
    assert response_headers["content-type"] == "application/json"
    assert "access-control-allow-origin" not in response_headers
    assert log == []


def test_an_allowed_origin_gets_a_preflight_and_cors_headers(door):
    url, log = door
    origin = {"Origin": "https://my.app"}
    status, _, headers = raw_request(url, "OPTIONS", CHAT, {**origin, "Access-Control-Request-Method": "POST"})  # fmt: skip
    assert status == 204 and headers["access-control-allow-origin"] == "https://my.app"
    assert "x-paperplug-conversation" in headers["access-control-allow-headers"]
    status, body, headers = raw_request(url, "POST", CHAT, {**origin, "Content-Type": "application/json"}, BODY)  # fmt: skip
    assert status == 200 and body["choices"][0]["message"]["content"] == "ok"
    assert headers["access-control-allow-origin"] == "https://my.app" and len(log) == 1


def test_clients_without_origin_pass_on_every_loopback_name(door):
    url, log = door
    port = urllib.parse.urlsplit(url).port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "127.0.0.1"):
        status, _, _ = raw_request(url, "POST", CHAT, {"Content-Type": "application/json", "Host": host}, BODY)  # fmt: skip
        assert status == 200
    assert client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )
    assert len(log) == 4


def test_a_configured_host_name_is_served(serve):
    up = serve(canned_upstream(plain=REPLY))
    config = {"upstream": {"url": up}, "server": {"allowed_hosts": ["gateway.internal"]}}
    url = serve(create_app(parse_config(config)))
    ok = {"Content-Type": "application/json", "Host": "gateway.internal:8080"}
    assert raw_request(url, "POST", CHAT, ok, BODY)[0] == 200
    assert raw_request(url, "POST", CHAT, {**ok, "Host": "other.internal"}, BODY)[0] == 403
