"""Benchmark of the embedded SmolLM2-135M-Instruct on one thread (no peer library in this issue).

Cold load (GGUF -> de-quantized cache) vs cached load; decode speed of our loop beside
transformers' own `generate` on the same prompts; HF backend direct vs through the loopback
OpenAI-compatible server. Prints a table with ratios.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import torch

torch.set_num_threads(1)

from paperplug_llm import ChatServer, HFChatModel, OpenAIChatModel  # noqa: E402
from paperplug_llm.smollm2 import MODEL_NAME, dequantize_to_cache, locate_gguf  # noqa: E402

PROMPTS = [
    "Explain what a hash table is in three sentences.",
    "Write a short poem about the sea.",
    "List three uses of a paperclip.",
]
MAX_TOKENS = 64


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> int:
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
        direct, d_s = timed(lambda: model.chat(msgs))
        with ChatServer(model) as server:
            remote = OpenAIChatModel("smollm2", server.url, timeout=120)
            served, s_s = timed(lambda: remote.chat(msgs))
            streamed, st_s = timed(lambda: "".join(remote.stream(msgs)))
        assert direct == served == streamed
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

    print(
        f"SmolLM2-135M-Instruct (Q4_1 GGUF de-quantized to float32), torch {torch.__version__}, 1 thread"
    )
    print("| measure | value | ratio / note |\n|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
