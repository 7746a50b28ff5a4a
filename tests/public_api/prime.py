"""Prime's public API: one valid call of each callable, for the battery (a vocabulary of 5 in
ℓ = 2 base-3 sub-tokens, sequences of 3, an untrained MLP denoiser of width 8, no training)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import paperplug_prime as p
import torch

from paperplug import seeded_torch
from paperplug.testing import Sweep

REASONS = {}


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


FOLDER = Path(tempfile.mkdtemp())
(FOLDER / "file.txt").write_text("not a folder")


def sweeps() -> dict[str, Sweep]:
    tokens = np.random.default_rng(0).integers(0, 5, size=(8, 3))
    fitted = p.PrimeMDM(ell=2, hidden=8, steps=2, progress=False).fit(tokens)
    sub, schedule = p.Subtokenizer(5, 2), p.Schedule("linear")
    with seeded_torch(0):
        model = p.PrimeDenoiser(5, 3, 2, 3, hidden=8, dropout=0.0)
    x0 = torch.tensor([[0, 4, 2], [1, 3, 3]])
    t = torch.tensor([0.3, 0.8])
    y = p.mask_subtokens(sub.encode(x0), schedule.alpha(t), sub.mask_id, _gen())
    logits = model(y, t).detach()
    allowed = sub.consistent(y)
    return {
        "smallest_base": Sweep(
            p.smallest_base, (5, 2), bad_params={"vocab_size": [1, 0], "ell": [0]}
        ),
        "Subtokenizer": Sweep(
            p.Subtokenizer,
            (5, 2),
            bad_params={"vocab_size": [1], "ell": [0], "shuffle": ["yes"], "seed": [-1]},
        ),
        "Subtokenizer.encode": Sweep(
            sub.encode, (x0,), bad_params={"tokens": [x0 + 5, x0 - 1]}, width=False
        ),
        "Subtokenizer.decode": Sweep(
            sub.decode, (sub.encode(x0),), bad_params={"digits": [sub.encode(x0)[..., :1]]}
        ),
        "Subtokenizer.consistent": Sweep(sub.consistent, (y,)),
        "Schedule": Sweep(p.Schedule, ("loglinear",), bad_params={"kind": ["cosine"]}),
        "Schedule.alpha": Sweep(schedule.alpha, (t,), bad_params={"t": [t + 1]}, width=False),
        "Schedule.time_at": Sweep(
            schedule.time_at, (t,), bad_params={"masked": [t + 1]}, width=False
        ),
        "Schedule.weight": Sweep(schedule.weight, (t,), bad_params={"t": [-t]}, width=False),
        "mask_subtokens": Sweep(
            p.mask_subtokens,
            (sub.encode(x0), schedule.alpha(t), sub.mask_id, _gen()),
            bad_params={"alpha": [t + 1], "mask_id": [-1]},
            width=False,  # sub-tokens of any ℓ
        ),
        "PrimeDenoiser": Sweep(
            p.PrimeDenoiser,
            (5, 3, 2, 3),
            {"hidden": 8},
            bad_params={
                "vocab_size": [1],
                "seq_len": [0],
                "ell": [0],
                "base": [1],
                "backbone": ["rnn"],
                "d_embed": [0],
                "hidden": [0],
                "layers": [0],
                "heads": [0],
                "dropout": [1.0, -0.1],
            },
        ),
        "PrimeDenoiser.forward": Sweep(
            model.forward, (y, t), bad_params={"t": [t[:1], t + 1]}, width=False
        ),
        "carry_over": Sweep(
            p.carry_over, (logits, allowed), bad_params={"allowed": [allowed[..., :2]]}
        ),
        "token_nll": Sweep(p.token_nll, (model, sub, x0, y, t), bad_params={"x0": [x0 + 5]}),
        "subtoken_nll": Sweep(p.subtoken_nll, (model, sub, x0, y, t), bad_params={"x0": [x0 + 5]}),
        "prime_loss": Sweep(
            p.prime_loss, (model, sub, schedule, x0, t, _gen()), bad_params={"t": [t + 1]}
        ),
        "prior_nll": Sweep(
            p.prior_nll,
            (sub, p.Schedule("loglinear"), x0, _gen()),
            width=False,  # sequences of any length: no model
        ),
        "nelbo_draw": Sweep(
            p.nelbo_draw, (model, sub, schedule, x0, t, _gen()), bad_params={"u": [t - 1, 0 * t]}
        ),
        "euler_sample": Sweep(
            p.euler_sample,
            (model, sub, schedule, 2, 3, 2, _gen()),
            bad_params={"n": [0], "seq_len": [0, 4], "nfe": [0], "device": ["no-such-device"]},
        ),
        "PrimeMDM.nelbo": Sweep(
            fitted.nelbo,
            (tokens[:2],),
            {"n_t": 2, "batch_size": 2},
            bad_params={
                "tokens": [tokens[:2] + 5, tokens[:2] - 1, tokens[:2, :2]],
                "n_t": [0],
                "seed": [-1],
                "batch_size": [0],
            },
        ),
        "PrimeMDM.save": Sweep(
            fitted.save, (FOLDER / "ckpt",), bad_params={"path": [FOLDER / "file.txt"]}
        ),
    }
