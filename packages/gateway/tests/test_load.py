"""32 concurrent streaming clients: no request lost or mixed with another's defense state; the
added latency (through the gateway against straight to the upstream) is reported."""

import collections
import concurrent.futures
import threading
import time

import numpy as np
from wire import client, streamed

import paperplug
from paperplug import Verdict

CLIENTS, REQUESTS = 32, 4


class Prefixes:
    """An output monitor that checks that every conversation's stream only grows: a payload
    that does not extend the last one seen for its conversation means two streams were mixed."""

    stage = "output"

    def __init__(self):
        self.last, self.mixed, self.lock = {}, [], threading.Lock()

    def check(self, payload, context=None):
        key = context["conversation_id"]
        with self.lock:
            previous = self.last.get(key, "")
            if not payload.startswith(previous) or (
                context.get("index") == 0 and previous and not context.get("final")
            ):
                self.mixed.append((key, previous, payload))
            self.last[key] = "" if context.get("final") else payload
        return Verdict(payload, True)


def echo(messages, tools):
    return {"content": f"echo {messages[-1]['content']} done"}


def run_clients(url, prefix):
    """Each client sends REQUESTS streamed requests (its own conversation); returns the
    latencies and every (sent, received, finish) triple."""

    def one(c):
        sdk = client(url, default_headers={"x-paperplug-conversation": f"{prefix}-{c}"})
        out = []
        for r in range(REQUESTS):
            nonce = f"{prefix}-{c}-{r}-" + "x" * (c % 5)
            start = time.perf_counter()
            text, finish, _ = streamed(
                sdk.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": nonce}], stream=True
                )
            )
            out.append((time.perf_counter() - start, nonce, text, finish))
        return out

    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        start = time.perf_counter()
        rows = [row for rows in pool.map(one, range(CLIENTS)) for row in rows]
    return rows, time.perf_counter() - start


def test_32_concurrent_streams_lose_nothing_and_mix_nothing(serve, capsys):
    from paperplug_gateway import create_app, parse_config
    from paperplug_gateway.embedded import scripted_upstream

    monitor = Prefixes()
    paperplug.register_component("defense", "prefixes", summary="stream order", paper="(test)")(
        lambda: monitor
    )
    up = serve(scripted_upstream(echo, chunk_delay=0.002))
    url = serve(
        create_app(
            parse_config(
                {
                    "upstream": {"url": up},
                    "defense": [{"name": "prefixes"}, {"name": "regex-guard"}],
                }
            )
        )
    )
    direct, _ = run_clients(up, "direct")
    guarded, wall = run_clients(url, "gw")
    assert len(guarded) == CLIENTS * REQUESTS
    assert all(
        text == f"echo {nonce} done" and finish == "stop" for _, nonce, text, finish in guarded
    )
    assert monitor.mixed == []
    assert collections.Counter(k.split(":h:")[1].rsplit("-", 1)[0] for k in monitor.last) == {
        "gw": CLIENTS
    }
    d, g = np.array([r[0] for r in direct]), np.array([r[0] for r in guarded])
    p50, p99 = (
        np.percentile(g, 50) - np.percentile(d, 50),
        np.percentile(g, 99) - np.percentile(d, 99),
    )
    # streams served at once: the requests' summed time over the run's wall time (1 for a
    # gateway that serves one stream at a time, up to 32 here); the latency is the bench's
    overlap = g.sum() / wall
    with capsys.disabled():
        print(
            f"\n32 streams x {REQUESTS}: added latency p50 {1000 * p50:.1f} ms, p99 {1000 * p99:.1f} ms; {overlap:.1f} streams at once"
        )
    assert overlap >= 8
