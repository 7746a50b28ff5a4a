"""Beside transformers' GPT-2 (1 and 2 layers, one head, trained from scratch on the same chains,
batches and steps) and the exact k-gram estimator: NLL curves, steps to within 0.05 nats of
Bayes, and the construction's width against k.

make bench PKG=kgram [ARGS="--steps 1600"]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from paperplug_kgram import KGramTransformer, MarkovICLTrainer, sample_chains, verify
from paperplug_kgram.embedded import TRAINING, random_sequences
from transformers import GPT2Config, GPT2LMHeadModel

from paperplug import seeded_torch
from paperplug.harness import Timer, pyplot, save_figure, single_thread, table


def train_gpt2(layers: int, cfg: dict, seed: int) -> tuple[list[int], list[float], float]:
    """GPT-2 of `layers` one-head layers on the batches MarkovICLTrainer draws for `seed`."""
    rng = np.random.default_rng(seed)
    S, k, T = cfg["vocab_size"], cfg["order"], cfg["seq_len"]
    evaluation = sample_chains(256, T, S, k, alpha=cfg["alpha"], rng=rng)
    config = GPT2Config(vocab_size=S, n_positions=T, n_embd=cfg["d_model"], n_layer=layers, n_head=1,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=None,
                        eos_token_id=None)  # fmt: skip
    with seeded_torch(seed):
        model = GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.0)
    steps, nlls = [], []
    with Timer() as t:
        for step in range(1, cfg["steps"] + 1):
            batch = sample_chains(cfg["batch_size"], T, S, k, alpha=cfg["alpha"], rng=rng)
            logits = model(input_ids=batch[:, :-1]).logits
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, S), batch[:, 1:].reshape(-1)
            )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % cfg["record_every"] == 0:
                with torch.no_grad():
                    logits = model(input_ids=evaluation[:, :-1]).logits
                    nll = torch.nn.functional.cross_entropy(
                        logits.reshape(-1, S), evaluation[:, 1:].reshape(-1)
                    )
                steps.append(step)
                nlls.append(float(nll))
    return steps, nlls, t.seconds


def first_within(
    steps: list[int], nlls: list[float], target: float, tol: float = 0.05
) -> int | None:
    return next((s for s, v in zip(steps, nlls, strict=True) if v - target <= tol), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=1600)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    single_thread()
    cfg = {**TRAINING, "steps": args.steps, "seq_len": 64, "d_model": 32, "batch_size": 64, "lr": 3e-3,
           "record_every": 50, "eval_sequences": 256}  # fmt: skip
    curves, rows, bayes = {}, [], None
    for layers in (2, 1):
        with Timer() as t:
            run = MarkovICLTrainer(n_layers=layers, seed=args.seed, progress=False, **cfg).fit()
        bayes = run.bayes_nll_
        curves[f"ours, {layers} layer(s)"] = (run.history_["step"], run.history_["nll"])
        rows.append([f"ours, {layers} layer(s)", run.history_["nll"][-1], run.history_["gap"][-1],
                     first_within(*curves[f"ours, {layers} layer(s)"], bayes), t.seconds])  # fmt: skip
        steps, nlls, seconds = train_gpt2(layers, cfg, args.seed)
        curves[f"GPT-2, {layers} layer(s)"] = (steps, nlls)
        rows.append(
            [
                f"GPT-2, {layers} layer(s)",
                nlls[-1],
                nlls[-1] - bayes,
                first_within(steps, nlls, bayes),
                seconds,
            ]
        )
        print(table(rows[-2:], HEADER), flush=True)
    rows.append(["exact add-1 k-gram (Bayes)", bayes, 0.0, 0, None])
    print(
        f"\norder-1 chains, S = 3, T = 64, d = 32, batch 64, {args.steps} steps, AdamW 3e-3, 1 thread"
    )
    print(table(rows, HEADER))

    width_rows = []
    for k in (1, 2, 3, 4, 5):
        model = KGramTransformer(3, k, max_len=200)
        error = verify(model, random_sequences(3, 2, 200, args.seed))
        width_rows.append([3, k, model.layout.width, model.mlp_width, f"{error:.1e}"])
    print("\nconstruction width against k (S = 3):")
    print(table(width_rows, ["S", "k", "residual width", "MLP width (S·2^(k+1))", "max |error|"]))

    fig, ax = pyplot().subplots(figsize=(7, 4))
    for name, (steps, nlls) in curves.items():
        ax.plot(steps, nlls, ls="-" if name.startswith("ours") else "--", label=name)
    ax.axhline(bayes, color="k", lw=0.8, label="Bayes")
    ax.set(
        xlabel="step", ylabel="NLL (nats)", title="Markov ICL: ours vs GPT-2 (one head per layer)"
    )
    ax.legend()
    save_figure(fig, "out/kgram/bench_nll.png")


HEADER = ["model", "final NLL", "gap to Bayes", "steps to within 0.05", "seconds"]

if __name__ == "__main__":
    main()
