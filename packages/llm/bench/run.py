"""Benchmark of the embedded SmolLM2-135M-Instruct on one thread (no peer library for this package).

Cold load (GGUF -> de-quantized cache) vs cached load; decode speed of our loop beside
transformers' own `generate` on the same prompts; HF backend direct vs through the loopback
OpenAI-compatible server (our client and the official `openai` SDK); three clients at once
against the server; scoring candidate continuations in one batched pass over the prompt's
cache beside one teacher-forced pass per candidate. Prints a table with ratios.

make bench PKG=llm
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

import torch
from paperplug_llm import ChatServer, HFChatModel, OpenAIChatModel
from paperplug_llm.smollm2 import MODEL_NAME, dequantize_to_cache, locate_gguf

from paperplug.harness import single_thread, table

PROMPTS = [
    "Explain what a hash table is in three sentences.",
    "Write a short poem about the sea.",
    "List three uses of a paperclip.",
]
MAX_TOKENS = 64


def timed(fn, repeat: int = 1):
    """(result, best wall time over `repeat` runs): the best of a few on a busy machine."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def concurrent_clients(server: ChatServer, prompts: list[str]) -> tuple[float, list[float]]:
    """All prompts sent at once, one client thread each: (wall time, each client's latency)."""
    latencies = [0.0] * len(prompts)

    def ask(i: int) -> None:
        start = time.perf_counter()
        OpenAIChatModel("smollm2", server.url, timeout=300).chat(
            [{"role": "user", "content": prompts[i]}]
        )
        latencies[i] = time.perf_counter() - start

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(prompts))]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, latencies


def main() -> int:
    single_thread()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        gguf = locate_gguf()
        _, cold = timed(lambda: dequantize_to_cache(gguf, Path(tmp) / MODEL_NAME))
        model, cached = timed(lambda: HFChatModel(Path(tmp) / MODEL_NAME, max_tokens=MAX_TOKENS))
        rows.append(("load: GGUF -> cache (cold)", f"{cold:.1f} s", ""))
        rows.append(("load: from cache", f"{cached:.1f} s", f"{cold / cached:.1f}x faster"))

        ours_tok = ours_s = ref_s = 0.0
        for p in PROMPTS:
            msgs = [{"role": "user", "content": p}]
            done, dt = timed(lambda msgs=msgs: model.complete(msgs))
            ours_tok, ours_s = ours_tok + len(done.token_ids), ours_s + dt
            ids = torch.tensor([model.prompt_ids(msgs)])
            ref, dt = timed(
                lambda ids=ids: model.model.generate(
                    ids, max_new_tokens=MAX_TOKENS, do_sample=False
                )
            )
            assert ref[0, ids.shape[1] :].tolist()[: len(done.token_ids)] == done.token_ids
            ref_s += dt
        rows.append(
            ("decode: paperplug loop", f"{ours_tok / ours_s:.1f} tok/s", f"{ours_tok:.0f} tokens")
        )
        rows.append(
            (
                "decode: transformers generate",
                f"{ours_tok / ref_s:.1f} tok/s",
                f"ours/theirs time {ours_s / ref_s:.2f}",
            )
        )

        msgs = [{"role": "user", "content": PROMPTS[0]}]
        direct, d_s = timed(lambda: model.chat(msgs), repeat=3)
        with ChatServer(model) as server:
            remote = OpenAIChatModel("smollm2", server.url, timeout=120)
            served, s_s = timed(lambda: remote.chat(msgs), repeat=3)
            streamed, st_s = timed(lambda: "".join(remote.stream(msgs)), repeat=3)
            import openai

            sdk = openai.OpenAI(base_url=server.url, api_key="none")
            via_sdk, sdk_s = timed(
                lambda: (
                    sdk.chat.completions.create(model="smollm2", messages=msgs)
                    .choices[0]
                    .message.content
                ),
                repeat=3,
            )
            alone = sum(
                timed(lambda p=p: remote.chat([{"role": "user", "content": p}]))[1] for p in PROMPTS
            )
            together, latencies = concurrent_clients(server, PROMPTS)
        assert direct == served == streamed == via_sdk
        rows.append(("chat: HF backend direct", f"{d_s:.2f} s", ""))
        rows.append(
            ("chat: via loopback server", f"{s_s:.2f} s", f"overhead {100 * (s_s / d_s - 1):+.1f}%")
        )
        rows.append(
            (
                "chat: via server, streamed",
                f"{st_s:.2f} s",
                f"overhead {100 * (st_s / d_s - 1):+.1f}%",
            )
        )

        rows.append(
            (
                "chat: official openai SDK via server",
                f"{sdk_s:.2f} s",
                f"overhead {100 * (sdk_s / d_s - 1):+.1f}%",
            )
        )
        rows.append(("3 prompts one after another (server)", f"{alone:.2f} s", ""))
        rows.append(
            (
                "3 clients at once (server, FIFO)",
                f"{together:.2f} s",
                f"ratio {together / alone:.2f}; latencies {', '.join(f'{x:.1f}' for x in sorted(latencies))} s",
            )
        )

        names = ["get_weather", "send_money", "read_file", "search_flights", "get_balance",
                 "update_password", "schedule_transaction", "get_iban"]  # fmt: skip
        messages = [{"role": "user", "content": "Pay the bill in bill-december-2023.txt"}]
        batched, b_s = timed(lambda: model.continuation_logprobs(messages, names), repeat=3)
        prompt = model.prompt_ids(messages)

        def one_by_one() -> list[list[float]]:
            out = []
            for n in names:
                cont = model.encode(n)
                with torch.inference_mode():
                    logits = model.model(input_ids=torch.tensor([prompt + cont])).logits[0].float()
                logp = torch.log_softmax(logits[len(prompt) - 1 : -1], -1)
                out.append(logp[torch.arange(len(cont)), torch.tensor(cont)].tolist())
            return out

        separate, s1_s = timed(one_by_one, repeat=3)
        err = max(
            abs(a - b)
            for x, y in zip(batched, separate, strict=True)
            for a, b in zip(x, y, strict=True)
        )
        rows.append(("score 8 tool names: one pass each", f"{s1_s:.2f} s", ""))
        rows.append(
            (
                "score 8 tool names: batched over prompt cache",
                f"{b_s:.2f} s",
                f"{s1_s / b_s:.1f}x faster; max |Δ log p| {err:.1e}",
            )
        )
    print(
        f"SmolLM2-135M-Instruct (Q4_1 GGUF de-quantized to float32), torch {torch.__version__}, 1 thread"
    )
    print(table(rows, ["measure", "value", "ratio / note"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
