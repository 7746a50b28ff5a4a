"""Each upstream fault gives the client a clear error within the configured timeout, and no
unchecked text; a defense that raises, times out or returns garbage blocks (fail closed) and
the refusal names it."""

import itertools
import time

import openai
import pytest
from wire import client, streamed

import paperplug
from paperplug import Verdict


def _faulty(fault):
    """Every request meets `fault`."""
    return lambda: fault


def reply(messages, tools):
    return {"content": "alpha beta gamma delta epsilon"}


@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        ("status_429", openai.RateLimitError, 429),
        ("status_500", openai.InternalServerError, 502),
        ("not_json", openai.InternalServerError, 502),
        ("stall", openai.APITimeoutError, 504),
    ],
)
def test_a_failing_upstream_is_an_openai_error(gateway, fault, error, status):
    url, _ = gateway(reply, fault=_faulty(fault), upstream={"timeout": 1.5})
    start = time.perf_counter()
    with pytest.raises(openai.APIError) as info:
        client(url, timeout=30).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    assert time.perf_counter() - start < 10
    if error is openai.APITimeoutError:  # the gateway's 504, not the client's own timeout
        assert (
            isinstance(info.value, openai.InternalServerError) and info.value.status_code == status
        )
    else:
        assert isinstance(info.value, error) and info.value.status_code == status
    assert info.value.body["type"] == "upstream_error"


@pytest.mark.parametrize("fault", ["stall_mid", "drop", "malformed", "no_done"])
def test_a_stream_that_breaks_ends_with_an_error(gateway, fault):
    url, _ = gateway(
        reply,
        fault=_faulty(fault),
        upstream={"timeout": 1.5},
        defense=[{"name": "regex-guard", "pattern": "zeta"}],
    )
    start = time.perf_counter()
    seen = []
    with pytest.raises(openai.APIError, match="upstream"):
        for chunk in client(url, timeout=30).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True
        ):
            seen.append(chunk.choices[0].delta.content or "" if chunk.choices else "")
    assert time.perf_counter() - start < 10
    shown = {
        "stall_mid": "alpha ",
        "drop": "alpha ",
        "malformed": "alpha ",
        "no_done": reply([], [])["content"],
    }
    assert "".join(seen) == shown[fault]  # each chunk checked before it was forwarded


def test_no_upstream_at_all_is_a_502(gateway, serve):
    from paperplug_gateway import create_app, parse_config

    url = serve(create_app(parse_config({"upstream": {"url": "http://127.0.0.1:9", "timeout": 2}})))
    with pytest.raises(openai.InternalServerError) as info:
        client(url).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert info.value.status_code == 502 and "could not be reached" in info.value.message


class Raises:
    stage = "output"

    def check(self, payload, context=None):
        raise RuntimeError("the monitor crashed")


class Garbage:
    stage = "output"

    def check(self, payload, context=None):
        return {"valid": True}  # not a Verdict


class Slow:
    stage = "output"

    def check(self, payload, context=None):
        time.sleep(5)
        return Verdict(payload, True)


class InputCrash:
    stage = "input"

    def check(self, payload, context=None):
        raise ValueError("bad state")


names = itertools.count()


@pytest.mark.parametrize("defense", [Raises, Garbage, Slow, InputCrash])
@pytest.mark.parametrize("stream", [False, True])
def test_a_failing_defense_blocks_and_is_named(gateway, defense, stream):
    name = f"failing-{next(names)}"
    paperplug.register_component("defense", name, summary="fails", paper="(test)")(defense)
    url, _ = gateway(reply, defense=[{"name": name, "timeout": 1}])
    kw = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    start = time.perf_counter()
    if stream:
        text, finish, _ = streamed(client(url).chat.completions.create(stream=True, **kw))
    else:
        answer = client(url).chat.completions.create(**kw)
        text, finish = answer.choices[0].message.content, answer.choices[0].finish_reason
    assert time.perf_counter() - start < 4  # the slow one is cut at its 1 s limit
    assert finish == "content_filter"
    assert text.endswith(f"I can't help with that. [blocked by {name}]")
    assert "alpha" not in text
