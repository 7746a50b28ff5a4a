"""Conversation state past one process: two gateway processes sharing one Redis serve a
multi-turn AgentDojo task whose requests alternate between them, as a load balancer would;
Redis killed mid-conversation fails the request closed with a clear 503 and the gateways
recover when it is back; a check past its deadline writes nothing; state stays bounded over
100,000 conversations in process; `serve --workers 2` sums its metrics across workers."""

import contextlib
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest
from paperplug_gateway import Gateway, parse_config
from paperplug_gateway.embedded import scripted_upstream
from wire import client

import paperplug
from paperplug import Verdict
from paperplug.state import ConversationState, MemoryStore

names = itertools.count()


def resident_bytes():
    """The process's resident memory (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, deadline=60):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


@contextlib.contextmanager
def redis_server(port):
    """A throwaway redis-server on loopback (Debian's `redis-server`; `.ci/run` installs it)."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is not installed (apt-get install redis-server; .ci/run does)"
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        end = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            assert time.monotonic() < end and proc.poll() is None, "redis-server did not start"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def gateway_process(tmp_path, config, *, workers=1):
    """`paperplug-gateway serve --config` in its own process; yields its base URL."""
    port = free_port()
    path = tmp_path / f"gateway-{port}.toml"
    lines = [
        f"[server]\nport = {port}\n",
        f'[upstream]\nurl = "{config["upstream"]}"\ntimeout = 10\n',
    ]
    for defense in config.get("defense", ()):
        lines.append(
            "[[defense]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in defense.items())
        )
    if "state" in config:
        lines.append(f'[state]\nurl = "{config["state"]}"\n')
    path.write_text("".join(lines))
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperplug_gateway.cli", "serve", "--config", str(path), "--workers", str(workers)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(20)


class Alternate(httpx.HTTPTransport):
    """A load balancer in the client: request i goes to ports[i % len(ports)]."""

    def __init__(self, ports):
        super().__init__()
        self.ports, self.count = ports, itertools.count()

    def handle_request(self, request):
        request.url = request.url.copy_with(port=self.ports[next(self.count) % len(self.ports)])
        return super().handle_request(request)


def _ports(*urls):
    return [httpx.URL(u).port for u in urls]


@pytest.mark.slow
def test_two_gateway_processes_share_a_conversations_drift_state_through_redis(serve, tmp_path):
    from agentdojo.task_suite.load_suites import get_suite
    from test_agentdojo import PAIRS, ObeyingModel, run_pairs

    suite, model = get_suite("v1.2", "banking"), ObeyingModel()
    upstream = serve(scripted_upstream(model))
    drift = {"name": "drift", "planner": "query"}
    with redis_server(free_port()) as redis_url:
        shared = {"upstream": upstream, "defense": [drift], "state": redis_url}
        with gateway_process(tmp_path, shared) as a, gateway_process(tmp_path, shared) as b:
            balanced = httpx.Client(transport=Alternate(_ports(a, b)))
            injected, done = run_pairs(a, model, suite, http_client=balanced)
    # as one gateway does (test_agentdojo): no injection, every task but user task 12's
    assert injected == 0
    assert done == [u for u, _ in PAIRS if u != "user_task_12"]


@pytest.mark.parametrize("shared", [True, False])
def test_a_repeated_payment_is_caught_across_processes_only_with_shared_state(
    serve, tmp_path, shared
):
    """The model proposes the same payment twice, its two turns served by two processes:
    DRIFT drops the repeat when they share Redis, and cannot when each keeps its own state."""
    pay = {"name": "send_money", "arguments": {"recipient": "UK12", "amount": 10}}
    upstream = serve(scripted_upstream(lambda m, t: {"content": "", "tool_calls": [pay]}))
    tools = [{"type": "function", "function": {"name": "send_money", "parameters": {"type": "object"}}}]  # fmt: skip
    history = [{"role": "user", "content": "Please pay UK12 10 euros."}]
    with contextlib.ExitStack() as stack:
        config = {"upstream": upstream, "defense": [{"name": "drift", "planner": "query"}]}
        if shared:
            config["state"] = stack.enter_context(redis_server(free_port()))
        a = stack.enter_context(gateway_process(tmp_path, config))
        b = stack.enter_context(gateway_process(tmp_path, config))
        finishes = []
        for url in (a, b):
            answer = client(url).chat.completions.create(model="m", messages=history, tools=tools)
            choice = answer.choices[0]
            finishes.append(choice.finish_reason)
            if choice.message.tool_calls:
                call = choice.message.tool_calls[0]
                history += [choice.message.model_dump(exclude_none=True),
                            {"role": "tool", "tool_call_id": call.id, "content": "sent"}]  # fmt: skip
    assert finishes == (
        ["tool_calls", "content_filter"] if shared else ["tool_calls", "tool_calls"]
    )


def test_redis_killed_mid_conversation_fails_closed_and_recovers(serve, tmp_path):
    pay = {"name": "send_money", "arguments": {"recipient": "UK12", "amount": 10}}
    upstream = serve(scripted_upstream(lambda m, t: {"content": "", "tool_calls": [pay]}))
    tools = [{"type": "function", "function": {"name": "send_money", "parameters": {"type": "object"}}}]  # fmt: skip
    ask = [{"role": "user", "content": "Please pay UK12 10 euros."}]
    port = free_port()
    drift = {"name": "drift", "planner": "query"}
    config = {"upstream": upstream, "defense": [drift], "state": f"redis://127.0.0.1:{port}/0"}
    with gateway_process(tmp_path, config) as url:
        sdk = client(url)
        with redis_server(port):
            first = sdk.chat.completions.create(model="m", messages=ask, tools=tools)
            assert first.choices[0].finish_reason == "tool_calls"
        with pytest.raises(openai.InternalServerError) as info:  # Redis gone: fail closed
            sdk.chat.completions.create(model="m", messages=ask, tools=tools)
        assert info.value.status_code == 503 and info.value.body["type"] == "state_error"
        assert "state store" in info.value.message and "refused" in info.value.message
        with redis_server(port):  # back: the same gateway serves again
            again = sdk.chat.completions.create(model="m", messages=ask, tools=tools)
            assert again.choices[0].finish_reason == "tool_calls"


class SlowWriter:
    """Writes its state, then takes `delay` seconds (past a 0.3 s limit when 1.0)."""

    stage = "tool"
    delay = 0.0

    def check(self, payload, context=None):
        context["state"].set("seen", payload)
        time.sleep(self.delay)
        context["state"].set("late", True)
        return Verdict(payload, True)


def test_a_check_past_its_deadline_writes_no_state(serve):
    pay = {"name": "send_money", "arguments": {"to": "x"}}
    upstream = serve(scripted_upstream(lambda m, t: {"content": "", "tool_calls": [pay]}))
    stores = {}
    for delay in (0.0, 1.0):
        name = f"slow-writer-{next(names)}"
        paperplug.register_component("defense", name, summary="t", paper="(t)")(
            type(name, (SlowWriter,), {"delay": delay})
        )
        gateway = Gateway(parse_config({"upstream": {"url": upstream}, "defense": [{"name": name, "timeout": 0.3}]}))  # fmt: skip
        answer = client(serve(gateway.app)).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "pay"}]
        )
        time.sleep(1.2)  # the slow check has finished in its thread by now
        stores[delay] = (answer.choices[0].finish_reason, len(gateway.store))
    assert stores == {0.0: ("tool_calls", 2), 1.0: ("content_filter", 0)}


def test_state_stays_bounded_over_100000_conversations():
    store = MemoryStore(max_items=10_000, ttl=3600)
    state = {"plan": ["read_file", "send_money"], "history": ["x" * 2000]}  # ~2.2 KB, as DRIFT's

    def conversations(start, stop):
        for i in range(start, stop):
            messages = [{"role": "user", "content": f"task {i}"}]
            request = ConversationState.for_request(store, f"key0:m:{i}", messages)
            view = request.scoped("drift")
            view.set("session", state)
            view.commit()
            request.persist({"role": "assistant", "content": "done"})

    conversations(0, 20_000)
    after_20k = resident_bytes()
    conversations(20_000, 100_000)
    grown = resident_bytes() - after_20k
    assert len(store) == 10_000
    # unbounded, the 80,000 more conversations would hold over 170 MB more (2.2 KB each)
    assert grown < 8 * 2**20, f"the process grew by {grown / 2**20:.1f} MiB"


def test_workers_sum_their_metrics(serve, tmp_path):
    upstream = serve(scripted_upstream())
    with gateway_process(tmp_path, {"upstream": upstream}, workers=2) as url:
        pids = set()
        for i in range(24):
            with httpx.Client() as fresh:  # a new connection each time: spread over the workers
                sdk = openai.OpenAI(base_url=url, api_key="none", max_retries=0, http_client=fresh)
                sdk.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"{i}"}]
                )
                pids.add(fresh.get(url.replace("/v1", "/healthz")).json().get("pid"))
        reads = [httpx.get(url.replace("/v1", "/metrics")).text for _ in range(6)]
    assert len(pids) == 2  # both workers served
    line = 'paperplug_gateway_requests_total{endpoint="chat",status="200"} 24.0'
    assert all(line in text for text in reads)
