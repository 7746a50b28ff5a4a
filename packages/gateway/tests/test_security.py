"""The door: keys (constant-time, never logged), body, message and max_tokens limits, and an
audit log that records verdicts but no message text unless asked."""

import json

import httpx
import openai
import pytest
from wire import client

KEY, OTHER = "k" * 24 + "-first", "k" * 24 + "-other"


def reply(messages, tools):
    return {"content": "my password is hunter2"}


@pytest.fixture
def keyed(gateway, tmp_path):
    audit = tmp_path / "audit.jsonl"
    url, _ = gateway(
        reply,
        defense=[{"name": "regex-guard"}],
        api_keys=[KEY, OTHER],
        max_body_bytes=4000,
        max_messages=3,
        max_tokens=64,
        audit={"path": str(audit)},
    )
    return url, audit


@pytest.mark.parametrize("key", [None, "wrong-key-of-some-length", KEY[:-1]])
def test_no_key_or_a_wrong_key_is_a_401(keyed, key):
    url, _ = keyed
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    for method, path in (("POST", "/chat/completions"), ("GET", "/models"), ("GET", "/../metrics")):
        response = httpx.request(
            method,
            url + path,
            headers=headers,
            json={"model": "m", "messages": [{"role": "user", "content": "x"}]},
        )
        assert response.status_code == 401, path
        assert response.json()["error"]["type"] == "authentication_error"
    with pytest.raises(openai.AuthenticationError):
        client(url, key=key or "not-a-key").chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    assert httpx.get(url.replace("/v1", "/healthz")).status_code == 200  # health needs no key


def test_either_key_opens_the_door(keyed):
    url, _ = keyed
    for key in (KEY, OTHER):
        answer = client(url, key=key).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
        assert answer.choices[0].finish_reason == "content_filter"


def test_limits_are_enforced_with_the_right_status(keyed):
    url, _ = keyed
    sdk = client(url, key=KEY)
    with pytest.raises(openai.APIStatusError) as info:
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x" * 5000}])
    assert info.value.status_code == 413
    chunked = httpx.post(
        f"{url}/chat/completions",
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        content=iter([b"{" * 3000, b" " * 3000]),
    )
    assert chunked.status_code == 413  # no content-length: counted while reading
    with pytest.raises(
        openai.BadRequestError, match="messages: holds 4 messages, over the limit of 3"
    ):
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}] * 4)
    with pytest.raises(
        openai.BadRequestError, match=r"max_tokens: must be an integer in \[1, 64\], got 65"
    ):
        sdk.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], max_tokens=65
        )


def test_the_audit_log_records_verdicts_without_text_or_keys(keyed):
    url, audit = keyed
    client(url, key=KEY).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "tell me a secret"}]
    )
    text = audit.read_text()
    entries = [json.loads(line) for line in text.splitlines()]
    assert [(e["defense"], e["stage"], e["verdict"]) for e in entries] == [
        ("regex-guard", "output", "block")
    ]
    assert set(entries[0]) == {
        "time",
        "conversation",
        "defense",
        "stage",
        "verdict",
        "risk",
        "reason",
    }
    assert (
        entries[0]["conversation"].startswith("key0:m:")
        and entries[0]["reason"] == "matched 'password'"
    )
    assert "secret" not in text and "hunter2" not in text and KEY not in text and OTHER not in text


def test_the_audit_log_keeps_text_only_when_configured(gateway, tmp_path):
    audit = tmp_path / "audit.jsonl"
    url, _ = gateway(
        reply, defense=[{"name": "regex-guard"}], audit={"path": str(audit), "log_text": True}
    )
    client(url).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert json.loads(audit.read_text().splitlines()[0])["text"] == "my password is hunter2"
