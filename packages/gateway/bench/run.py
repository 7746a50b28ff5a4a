"""Benchmark: the latency the gateway adds, beside LiteLLM's proxy, on the same scripted
upstream and the same clients, in one run. Each server is its own process (upstream, gateway,
LiteLLM); the clients are 32 threads with the official `openai` SDK, each streaming
`--requests` replies of `--words` words (benign held-out replies of SCM's data). Added latency = the latency through a proxy minus the
latency straight to the upstream (p50 and p99 over all requests); per chunk = that, divided by
the chunks of a reply. Configurations: no defense on either side; a regex-level output
defense on both (paperplug: `RegexGuard` as a user's plugin; LiteLLM: a `CustomGuardrail`
whose streaming hook checks the growing text the same way); and the gateway alone with DRIFT
(query planner) and SCM configured by name (a tiny SCM trained at the start, seconds), which
LiteLLM has no counterpart for, with SCM's steps one stream at a time and batched across the
open streams (`batch = true`).

    make bench PKG=gateway ARGS="--requests 8"
    make bench PKG=gateway ARGS="--part state"   # what conversation state costs: memory, Redis
    make bench PKG=gateway ARGS="--part throughput"   # requests/s at saturation, beside LiteLLM
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import openai
from paperplug_gateway.embedded import RegexGuard

from paperplug.harness import single_thread, table

CLIENTS = 32
PATTERN = r"(?i)\bpassword\b"
KEY = "sk-bench-" + "0" * 32  # both proxies authenticate every request with it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str, timeout: float = 600) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"{url} did not come up (server logs in {LOGS})")


LOGS = Path(tempfile.gettempdir()) / "paperplug-gateway-bench"


def spawn(args: list[str], env: dict | None = None) -> subprocess.Popen:
    """A server process; its output goes to a log file under LOGS."""
    LOGS.mkdir(exist_ok=True)
    log = open(LOGS / f"{Path(args[0]).name}-{len(list(LOGS.iterdir()))}.log", "w")  # noqa: SIM115
    return subprocess.Popen(
        args, env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT
    )


def upstream(port: int, text: str, delay: float) -> subprocess.Popen:
    code = textwrap.dedent(
        f"""
        import uvicorn
        from paperplug_gateway.embedded import scripted_upstream
        def reply(messages, tools):
            if messages[-1]["content"] == "leak":
                return {{"content": "the password is hunter2"}}
            return {{"content": {text!r}}}
        uvicorn.run(scripted_upstream(reply, chunk_delay={delay}), host="127.0.0.1", port={port}, log_level="warning", access_log=False, ws="none")
        """
    )
    return spawn([sys.executable, "-c", code])


def train_scm(work: Path, words: int) -> str:
    """A tiny SCM checkpoint in `work` (the package's embedded training, seconds on one
    thread), and the reply every upstream request gets: the first window of `words` words of
    benign held-out replies that this SCM lets through (so every configuration streams the
    same chunks)."""
    from paperplug_scm import EMBEDDED_TRAINING, SCMTrainer, load_data, response_text

    import paperplug

    train, val, test = load_data(0, n_train=300, n_val=100, n_test=100)
    scm = SCMTrainer(progress=False, tiny={"hidden_size": 64, "num_layers": 1}, seed=0,
                     **EMBEDDED_TRAINING).fit(train, val)  # fmt: skip
    path = scm.save(work / "scm-ckpt")
    monitor = paperplug.load("defense", "scm", path=str(path))
    benign = [w for ex in test if not any(ex["sentence_labels"]) for w in response_text(ex).split()]
    for start in range(0, len(benign) - words, words):  # the first window the monitor passes
        text = " ".join(benign[start : start + words])
        if monitor.check(text, {"prompt": "go", "final": True}).valid:
            return text
    raise AssertionError("the tiny SCM stops every benign window: pick another seed")


def gateway(port: int, up: str, defense: str, work: Path) -> subprocess.Popen:
    plugins = work / "plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / "regex_plugin.py").write_text(
        "from paperplug import hookimpl\n"
        "from paperplug_gateway.embedded import RegexGuard\n\n\n"
        "@hookimpl\ndef register_defenses(register):\n"
        "    register('regex-guard', RegexGuard, summary='regex', paper='(bench)')\n"
    )
    defenses = {
        "none": "",
        "regex": f"[[defense]]\nname = \"regex-guard\"\npattern = '{PATTERN}'\n",
        "drift+scm": '[[defense]]\nname = "drift"\nplanner = "query"\ntimeout = 60\n'
        f'[[defense]]\nname = "scm"\npath = "{work / "scm-ckpt"}"\ntimeout = 60\n'
        f'[audit]\npath = "{LOGS / "drift-scm-audit.jsonl"}"\n',
        "drift+scm batched": '[[defense]]\nname = "drift"\nplanner = "query"\ntimeout = 60\n'
        f'[[defense]]\nname = "scm"\npath = "{work / "scm-ckpt"}"\ntimeout = 60\nbatch = true\n',
    }
    config = work / f"gateway-{port}.toml"
    config.write_text(
        f'[server]\nport = {port}\nmax_tokens = 100000\napi_keys = ["{KEY}"]\n'
        f'[upstream]\nurl = "{up}"\ntimeout = 60\n{defenses[defense]}'
    )
    exe = Path(sys.executable).with_name("paperplug-gateway")
    return spawn(
        [str(exe), "serve", "--config", str(config)], {"PAPERPLUG_PLUGINS_DIR": str(plugins)}
    )


LITELLM_GUARD = '''
import re
from litellm.integrations.custom_guardrail import CustomGuardrail

PATTERN = re.compile(r"{pattern}")


class RegexGuardrail(CustomGuardrail):
    """Stops a streamed reply once the text so far matches, as the gateway's RegexGuard does."""

    async def async_post_call_streaming_iterator_hook(self, user_api_key_dict, response, request_data):
        text = ""
        async for chunk in response:
            for choice in getattr(chunk, "choices", []) or []:
                text += getattr(choice.delta, "content", None) or ""
            if PATTERN.search(text):
                return
            yield chunk
'''


def litellm(port: int, up: str, defense: str, work: Path) -> subprocess.Popen:
    regex = defense == "regex"
    (work / "regex_guardrail.py").write_text(LITELLM_GUARD.format(pattern=PATTERN))
    guard = (
        "guardrails:\n  - guardrail_name: regex-guard\n    litellm_params:\n"
        "      guardrail: regex_guardrail.RegexGuardrail\n      mode: post_call\n      default_on: true\n"
        if regex
        else ""
    )
    config = work / f"litellm-{port}.yaml"
    config.write_text(
        f"model_list:\n  - model_name: scripted\n    litellm_params:\n      model: openai/scripted\n"
        f"      api_base: {up}\n      api_key: none\n{guard}"
        "litellm_settings:\n  drop_params: true\n  telemetry: false\n"
    )
    exe = Path(sys.executable).with_name("litellm")
    return spawn(
        [
            str(exe),
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--num_workers",
            "1",
        ],
        {"LITELLM_LOG": "ERROR", "LITELLM_MASTER_KEY": KEY},
    )


def run_clients(url: str, requests: int, key: str = KEY) -> tuple[np.ndarray, int]:
    """Latency of every streamed request (32 clients at once), and the chunks of a reply."""

    def one(_: int) -> tuple[list[float], int]:
        sdk = openai.OpenAI(base_url=url, api_key=key, max_retries=0, timeout=120)
        times, chunks = [], 0
        for _ in range(requests):
            start = time.perf_counter()
            stream = sdk.chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": "go"}], stream=True
            )
            chunks = sum(1 for c in stream if c.choices and c.choices[0].delta.content)
            times.append(time.perf_counter() - start)
        return times, chunks

    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(one, range(CLIENTS)))
    return np.array([t for times, _ in results for t in times]), results[0][1]


def leaks(url: str) -> bool:
    """Whether a streamed reply holding "password" reaches the client through `url`."""
    sdk = openai.OpenAI(base_url=url, api_key=KEY, max_retries=0, timeout=120)
    stream = sdk.chat.completions.create(
        model="scripted", messages=[{"role": "user", "content": "leak"}], stream=True
    )
    try:
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    except openai.APIError:
        return False  # a proxy that ends the stream with an error did not let it through
    return "password" in text


def state_cost(requests: int) -> None:
    """What conversation state costs, DRIFT configured by name: the bytes stored per
    conversation, and the latency of a two-turn conversation's requests with the state in
    process against Redis (a redis-server on loopback), sequential, median over `requests`."""
    import httpx
    from paperplug_gateway import Gateway, parse_config, serve_in_thread
    from paperplug_gateway.embedded import scripted_upstream

    pay = {"name": "send_money", "arguments": {"recipient": "UK12", "amount": 10}}
    tools = [{"type": "function", "function": {"name": "send_money", "parameters": {"type": "object"}}}]  # fmt: skip
    port = free_port()
    redis = spawn(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"])
    rows = []
    try:
        with serve_in_thread(
            scripted_upstream(lambda m, t: {"content": "", "tool_calls": [pay]})
        ) as up:
            for name, state in (
                ("in process", {}),
                ("Redis", {"url": f"redis://127.0.0.1:{port}/0"}),
            ):
                gateway = Gateway(parse_config({"upstream": {"url": up}, "state": state,
                                                "defense": [{"name": "drift", "planner": "query"}]}))  # fmt: skip
                with serve_in_thread(gateway.app) as url, httpx.Client() as http:
                    sdk = openai.OpenAI(
                        base_url=url, api_key="none", max_retries=0, http_client=http
                    )
                    times = []
                    for i in range(requests):
                        history = [{"role": "user", "content": f"Please pay UK12 10 euros ({i})."}]
                        for _ in range(2):
                            start = time.perf_counter()
                            answer = sdk.chat.completions.create(
                                model="m", messages=history, tools=tools
                            )
                            times.append(time.perf_counter() - start)
                            message = answer.choices[0].message
                            call = (message.tool_calls or [None])[0]
                            history += [message.model_dump(exclude_none=True)]
                            if call is not None:
                                history += [
                                    {"role": "tool", "tool_call_id": call.id, "content": "sent"}
                                ]
                if name == "in process":  # the same JSON goes to Redis
                    size = gateway.store.nbytes / len(gateway.store)
                rows.append([name, 1000 * np.median(times), 1000 * np.percentile(times, 99)])
    finally:
        redis.terminate()
        redis.wait(10)
    print(
        f"\nDRIFT (query planner) by name, {requests} two-turn conversations, one client; "
        f"{size:.0f} bytes of JSON stored per conversation turn"
    )
    print(table(rows, ["state", "p50 ms/request", "p99 ms/request"], digits=1))


def saturate(url: str, seconds: float, clients: int = CLIENTS) -> float:
    """Non-streamed requests per second that `clients` threads complete through `url`, each
    sending its next request as soon as the last one is answered, for `seconds`."""
    stop = time.monotonic() + seconds

    def one(_: int) -> int:
        sdk = openai.OpenAI(base_url=url, api_key=KEY, max_retries=0, timeout=120)
        done = 0
        while time.monotonic() < stop:
            sdk.chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": "go"}]
            )
            done += 1
        return done

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        total = sum(pool.map(one, range(clients)))
    return total / (time.monotonic() - start)


def throughput(seconds: float, rounds: int) -> None:
    """Requests per second at saturation (non-streamed, no defense, 32 clients): the upstream
    alone, the gateway and LiteLLM's proxy, in alternating rounds; the median per server."""
    procs, rates = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        try:
            up_port = free_port()
            procs.append(upstream(up_port, "a short reply of a few words", 0.0))
            up = f"http://127.0.0.1:{up_port}/v1"
            wait_up(f"{up}/models")
            servers = {"upstream alone": up}
            for name, start, health in (("paperplug-gateway", gateway, "/healthz"),
                                        ("LiteLLM proxy", litellm, "/health/liveliness")):  # fmt: skip
                port = free_port()
                procs.append(start(port, up, "none", work))
                wait_up(f"http://127.0.0.1:{port}{health}")
                servers[name] = f"http://127.0.0.1:{port}/v1"
            for url in servers.values():
                saturate(url, 2)  # warm up
            for r in range(rounds):
                for name, url in servers.items():
                    rates.setdefault(name, []).append(saturate(url, seconds))
                print(f"round {r + 1}/{rounds} done", flush=True)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=30)
    rows = [[name, float(np.median(r)), float(np.median(r)) / np.median(rates["upstream alone"])]
            for name, r in rates.items()]  # fmt: skip
    print(f"\n{CLIENTS} clients, non-streamed, no defense, {rounds} rounds of {seconds:g} s")
    print(table(rows, ["server", "requests/s (median)", "of the upstream's"], digits=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=8, help="streamed requests per client")
    parser.add_argument("--words", type=int, default=40, help="words (chunks) per reply")
    parser.add_argument(
        "--delay", type=float, default=0.005, help="the upstream's seconds per chunk"
    )
    parser.add_argument("--rounds", type=int, default=5, help="alternating direct/proxy rounds")
    parser.add_argument("--part", choices=("latency", "state", "throughput"), default="latency")
    parser.add_argument("--seconds", type=float, default=10, help="seconds per throughput round")
    args = parser.parse_args(argv)
    single_thread()
    if args.part == "state":
        state_cost(max(args.requests, 50))
        return 0
    if args.part == "throughput":
        throughput(args.seconds, args.rounds)
        return 0
    assert RegexGuard(PATTERN).pattern.pattern == PATTERN
    rows, procs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        try:
            text = train_scm(work, args.words)
            up_port = free_port()
            procs.append(upstream(up_port, text, args.delay))
            up = f"http://127.0.0.1:{up_port}/v1"
            wait_up(f"{up}/models")
            servers = {}
            configurations = [
                ("paperplug-gateway", gateway, "none"),
                ("LiteLLM proxy", litellm, "none"),
                ("paperplug-gateway", gateway, "regex"),
                ("LiteLLM proxy", litellm, "regex"),
                ("paperplug-gateway", gateway, "drift+scm"),
                ("paperplug-gateway", gateway, "drift+scm batched"),
            ]
            for name, start, defense in configurations:
                port = free_port()
                procs.append(start(port, up, defense, work))
                health = "/health/liveliness" if name == "LiteLLM proxy" else "/healthz"
                wait_up(f"http://127.0.0.1:{port}{health}")
                servers[(name, defense)] = f"http://127.0.0.1:{port}/v1"
            _, chunks = run_clients(up, 1)
            for (name, defense), url in servers.items():
                run_clients(url, 1)  # warm up
                if not defense.startswith("drift+scm"):  # SCM judges harm, not a password
                    leaked = leaks(url)
                    assert leaked == (defense == "none"), (
                        f"{name}: the {defense} configuration "
                        f"{'let through' if leaked else 'stopped'} a leak"
                    )
            added: dict = {key: [] for key in servers}
            for r in range(args.rounds):  # each proxy right after its own direct baseline
                for key, url in servers.items():
                    direct, _ = run_clients(up, args.requests)
                    through, n = run_clients(url, args.requests)
                    assert n == chunks, f"{key[0]} lost chunks: {n} of {chunks}"
                    added[key].append(
                        [np.percentile(through, q) - np.percentile(direct, q) for q in (50, 99)]
                    )
                print(f"round {r + 1}/{args.rounds} done", flush=True)
            shown = {"none": "none", "regex": "regex (output)", "drift+scm": "DRIFT + SCM",
                     "drift+scm batched": "DRIFT + SCM, SCM batched"}  # fmt: skip
            for (name, defense), rounds in added.items():
                p50, p99 = np.median(np.array(rounds), axis=0)
                rows.append(
                    [
                        name,
                        shown[defense],
                        1000 * p50,
                        1000 * p99,
                        1000 * p50 / chunks,
                    ]
                )
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=30)
    print(
        f"\n{CLIENTS} concurrent streaming clients x {args.requests} requests, {chunks} chunks a reply, upstream {1000 * args.delay:g} ms/chunk; direct p50 {1000 * np.percentile(direct, 50):.0f} ms, p99 {1000 * np.percentile(direct, 99):.0f} ms"
    )
    print(
        table(
            rows,
            ["proxy", "defense", "added p50 ms", "added p99 ms", "added ms/chunk (p50)"],
            digits=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
