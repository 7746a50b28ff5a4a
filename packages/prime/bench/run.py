"""Prime beside Meta's `flow-matching` library (its masked discrete path, generalized KL loss and
Euler solver: masked diffusion, MDM) on the same backbone, data, steps and batch: test bits per
pixel (the NELBO, a valid bound, for every paperplug model) and the idle-step fraction.

By default at equal parameters (sub-token embeddings of width 16/ℓ), each ℓ trained on the
paper's objective and on the NELBO; `--wide` instead gives every sub-token a 16-wide embedding
(the first layer grows with ℓ), ℓ ∈ {1, 2, 3, 5}, the paper's objective.

make bench PKG=prime [ARGS="--steps 1500 --seeds 5"]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch
from paperplug_prime import PrimeDenoiser, Subtokenizer, carry_over
from paperplug_prime.embedded import ELLS, VOCAB, digit_tokens
from paperplug_prime.trainer import OBJECTIVES, PrimeMDM

from paperplug import seeded_torch
from paperplug.harness import Timer, fmt_ci, progress, single_thread, table


class PeerMDM(torch.nn.Module):
    """The same denoiser (ℓ = 1, carry-over) in flow-matching's convention: tokens with the mask
    as index C, time running from noise (0) to data (1), logits over C + 1 (the mask never)."""

    def __init__(self, seq_len: int) -> None:
        super().__init__()
        self.sub = Subtokenizer(VOCAB, 1)
        self.net = PrimeDenoiser(VOCAB, seq_len, 1, self.sub.base)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        y = x.unsqueeze(-1)  # ℓ = 1: the token is its only sub-token; index C is the mask
        logp = carry_over(self.net(y, 1 - t), self.sub.consistent(y))
        return torch.cat([logp, torch.full_like(logp[..., :1], float("-inf"))], -1)


def peer_run(Xtr: np.ndarray, Xte: np.ndarray, steps: int, seed: int) -> dict[str, float]:
    from flow_matching.loss import MixturePathGeneralizedKL
    from flow_matching.path import MixtureDiscreteProbPath
    from flow_matching.path.scheduler import PolynomialConvexScheduler
    from flow_matching.solver import MixtureDiscreteEulerSolver
    from flow_matching.utils import ModelWrapper

    path = MixtureDiscreteProbPath(scheduler=PolynomialConvexScheduler(n=1.0))
    loss_fn = MixturePathGeneralizedKL(path=path)
    x_train = torch.as_tensor(Xtr)
    with seeded_torch(seed):  # the library draws from torch's global generator
        model = PeerMDM(Xtr.shape[1])
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model.train()
        for _ in range(steps):
            x1 = x_train[torch.randint(len(x_train), (128,))]
            t = torch.rand(128).clamp(max=1 - 1e-3)
            sample = path.sample(t=t, x_0=torch.full_like(x1, VOCAB), x_1=x1)
            loss = loss_fn(logits=model(sample.x_t, sample.t), x_1=x1, x_t=sample.x_t, t=sample.t)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        x_test = torch.as_tensor(Xte)
        total = 0.0
        with torch.no_grad():
            grid = (torch.arange(64) + torch.rand(())) / 64
            for t in grid.clamp(max=1 - 1e-3):
                tt = t.expand(len(x_test))
                sample = path.sample(t=tt, x_0=torch.full_like(x_test, VOCAB), x_1=x_test)
                total += loss_fn(model(sample.x_t, tt), x_test, sample.x_t, tt).item()
        bits = total / 64 / math.log(2)

        class Probabilities(ModelWrapper):
            def forward(self, x, t, **extras):
                return self.model(x, t).exp()

        solver = MixtureDiscreteEulerSolver(Probabilities(model), path, vocabulary_size=VOCAB + 1)
        idle = {}
        for nfe in (32, 64):
            grid = torch.linspace(0, 1 - 1e-3, nfe + 1)
            with torch.no_grad():
                states = solver.sample(
                    x_init=torch.full((200, Xtr.shape[1]), VOCAB),
                    step_size=None,
                    time_grid=grid,
                    return_intermediates=True,
                )
            changed = (states[1:] != states[:-1]).flatten(2).any(2)  # (steps, samples)
            idle[nfe] = float((~changed).float().mean())
    return {"bits": bits, "idle32": idle[32], "idle64": idle[64]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--wide", action="store_true", help="ℓ ∈ {1, 2, 3, 5} with 16-wide sub-token embeddings"
    )
    args = parser.parse_args()
    if args.wide:
        variants = [(ell, 16, "prime") for ell in ELLS]
    else:
        variants = [(ell, 16 // ell, objective) for objective in OBJECTIVES for ell in (1, 2, 4)]
    single_thread()
    runs: dict[str, list[dict[str, float]]] = {}
    times: dict[str, list[float]] = {}
    for seed in progress(range(args.seeds), "seeds"):
        Xtr, Xte, _, _ = digit_tokens(seed)
        with Timer() as timer:
            result = peer_run(Xtr, Xte, args.steps, seed)
        runs.setdefault("flow-matching MDM, 609,376 parameters", []).append(result)
        times.setdefault("flow-matching MDM, 609,376 parameters", []).append(timer.cpu_seconds)
        for ell, d_embed, objective in variants:
            with Timer() as timer:
                model = PrimeMDM(ell=ell, d_embed=d_embed, objective=objective, steps=args.steps,
                                 seed=seed, progress=False).fit(Xtr)  # fmt: skip
                idle = {nfe: model.sample(200, nfe=nfe, seed=seed)[1] for nfe in (32, 64)}
                result = {"bits": model.nelbo(Xte, n_t=64), "idle32": idle[32], "idle64": idle[64]}
            name = "MDM (ℓ = 1)" if ell == 1 else f"Prime ℓ = {ell} (b = {model.sub_.base})"
            params = sum(p.numel() for p in model.model_.parameters())
            name += f", d_embed {d_embed}, {params:,} parameters, trained on "
            name += "the paper's objective" if objective == "prime" else "the NELBO"
            runs.setdefault(name, []).append(result)
            times.setdefault(name, []).append(timer.cpu_seconds)
    rows = [
        [
            name,
            fmt_ci([r["bits"] for r in rs]),
            fmt_ci([r["idle32"] for r in rs]),
            fmt_ci([r["idle64"] for r in rs]),
            f"{np.mean(times[name]):.0f}",
        ]
        for name, rs in runs.items()
    ]
    print(
        f"digits, {args.steps} steps of batch 128, MLP hidden 256, seeds 0–{args.seeds - 1} "
        "(mean ± 95% interval); test NELBO on a stratified grid of 64 draws"
    )
    print(table(rows, ["model", "test bits/pixel", "idle @32", "idle @64", "CPU s"]))
    mdm = {name: rs for name, rs in runs.items() if name.startswith("MDM")}
    for name, rs in runs.items():
        if name.startswith("Prime"):
            ref = next(r for n, r in mdm.items() if n.endswith(name.split("trained on ")[1]))
            gaps = [a["bits"] - b["bits"] for a, b in zip(rs, ref, strict=True)]
            print(f"{name}: minus MDM, paired by seed: {fmt_ci(gaps)} bits/pixel")


if __name__ == "__main__":
    main()
