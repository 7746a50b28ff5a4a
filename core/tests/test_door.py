"""The door of a local JSON API: every request a web page can make a browser send without a
preflight (a text/plain or form POST, a foreign Origin, a rebound Host) is refused, and what
non-browser clients send (no Origin, JSON) passes."""

import pytest

from paperplug.door import Door, host_name, served_hosts

JSON = {"host": "127.0.0.1:8080", "content-type": "application/json"}


@pytest.mark.parametrize(
    ("host", "name"),
    [
        ("127.0.0.1:8080", "127.0.0.1"),
        ("LOCALHOST.:80", "localhost"),
        ("[::1]:8080", "::1"),
        ("::1", "::1"),
        ("evil.example", "evil.example"),
    ],
)
def test_host_name_drops_the_port_the_brackets_and_the_trailing_dot(host, name):
    assert host_name(host) == name


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
def test_a_post_not_declared_json_is_a_415(content_type):
    headers = {"host": "127.0.0.1:8080"}
    if content_type:
        headers["content-type"] = content_type
    refusal = Door().check("POST", headers)
    assert (refusal.status, refusal.param) == (415, "content-type")
    assert Door().check("GET", {"host": "127.0.0.1:8080"}) is None  # GET has no body


def test_json_with_a_charset_from_a_client_without_origin_passes():
    assert Door().check("POST", {**JSON, "content-type": "Application/JSON; charset=utf-8"}) is None


@pytest.mark.parametrize(
    "host", ["evil.example:8080", "localhost.evil.example", "127.0.0.1.nip.io:8080", "10.0.0.5"]
)
def test_a_host_the_server_does_not_serve_is_refused(host):
    refusal = Door().check("POST", {**JSON, "host": host})
    assert (refusal.status, refusal.param) == (403, "host")


@pytest.mark.parametrize("host", ["localhost:1", "127.0.0.1", "127.8.9.10:5", "[::1]:80"])
def test_loopback_names_and_addresses_are_served(host):
    assert Door().check("POST", {**JSON, "host": host}) is None


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", "http://127.0.0.1:9999", "http://localhost:8080"]
)
def test_a_foreign_origin_is_refused_and_gets_no_cors_headers(origin):
    headers = {**JSON, "origin": origin}
    refusal = Door().check("POST", headers)
    assert (refusal.status, refusal.param) == (403, "origin")
    assert Door().cors_headers(headers) == {}
    assert Door().check("OPTIONS", headers).status == 403  # no preflight for it either


def test_an_allowed_origin_and_the_servers_own_pass_with_cors_for_the_allowed_one():
    door = Door(origins=("https://my.app/",), allow_headers=("authorization", "x-conv"))
    allowed = {**JSON, "origin": "https://my.app"}
    assert door.check("POST", allowed) is None
    assert door.cors_headers(allowed) == {
        "access-control-allow-origin": "https://my.app",
        "vary": "Origin",
    }
    assert (
        door.preflight_headers(allowed)["access-control-allow-headers"] == "authorization, x-conv"
    )
    assert door.check("POST", {**JSON, "origin": "http://127.0.0.1:8080"}) is None  # same origin
    assert door.check("POST", {**JSON, "origin": "https://other.app"}).status == 403


def test_a_cross_site_fetch_without_origin_is_refused():
    headers = {"host": "localhost:8080", "sec-fetch-site": "cross-site"}
    assert Door().check("GET", headers).param == "sec-fetch-site"
    assert Door().check("GET", {**headers, "sec-fetch-site": "none"}) is None  # typed in the bar


def test_the_served_names_follow_the_bind_address():
    assert served_hosts("127.0.0.1") == ("localhost", "127.0.0.1", "::1")
    assert served_hosts("10.1.2.3", ["Gateway.Internal."]) == (
        "localhost",
        "127.0.0.1",
        "::1",
        "10.1.2.3",
        "gateway.internal",
    )
    assert served_hosts("0.0.0.0") == ("*",)  # a public bind needs keys; any name then
    assert Door(hosts=served_hosts("0.0.0.0")).check("POST", {**JSON, "host": "a.b"}) is None


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="origins must be a sequence of strings"):
        Door(origins="https://my.app")
