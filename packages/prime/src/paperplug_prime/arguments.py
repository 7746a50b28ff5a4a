"""The checks the stage functions share: the model, the subtokenizer, the schedule, tokens
x₀ (B, L), sub-tokens y (B, L, ℓ), per-sequence times (B,) and a torch generator."""

from __future__ import annotations

from typing import Any

import torch

from paperplug.checks import check_tensor, check_type
from paperplug_prime.schedule import Schedule, _times
from paperplug_prime.subtokenizer import Subtokenizer


def check_parts(model: Any = None, sub: Any = None, schedule: Any = None,
                generator: Any = None) -> None:  # fmt: skip
    """TypeErrors naming a model that is no torch module, a subtokenizer, schedule or
    generator of the wrong type; a ValueError for a model over another vocabulary."""
    if model is not None:
        check_type(model, "model", torch.nn.Module, what="a torch module (a PrimeDenoiser)")
    if sub is not None:
        check_type(sub, "sub", Subtokenizer)
    if schedule is not None:
        check_type(schedule, "schedule", Schedule)
    if generator is not None:
        check_type(generator, "generator", torch.Generator)
    vocab = getattr(model, "vocab_size", None)
    if sub is not None and vocab is not None and vocab != sub.vocab_size:
        raise ValueError(f"model predicts {vocab} tokens but sub has {sub.vocab_size}")


def check_tokens(x0: Any, sub: Subtokenizer, model: Any = None, name: str = "x0") -> torch.Tensor:
    """(B, L) int64 tokens in [0, C), L the model's sequence length when it has one."""
    x0 = check_tensor(x0, name, dtype="int", ndim=2)
    if x0.shape[1] == 0:
        raise ValueError(f"{name} has sequences of length 0")
    seq_len = getattr(model, "seq_len", None)
    if seq_len is not None and x0.shape[1] != seq_len:
        raise ValueError(f"{name} must have sequences of length {seq_len} (the model's), "
                         f"got {x0.shape[1]}")  # fmt: skip
    if x0.min() < 0 or x0.max() >= sub.vocab_size:
        raise ValueError(f"{name} must lie in [0, {sub.vocab_size}), got "
                         f"[{int(x0.min())}, {int(x0.max())}]")  # fmt: skip
    return x0


def check_subtokens(y: Any, sub: Subtokenizer, x0: torch.Tensor) -> torch.Tensor:
    """(B, L, ℓ) sub-tokens in [0, b] over the positions of x₀."""
    y = sub._digits(y, "y")
    if y.shape[:-1] != x0.shape:
        raise ValueError(f"y must have shape {(*x0.shape, sub.ell)} (x0's and ℓ), got "
                         f"{tuple(y.shape)}")  # fmt: skip
    return y


def check_times(t: Any, n: int, name: str = "t") -> torch.Tensor:
    """(n,) times in [0, 1], one per sequence."""
    t = _times(t, name)
    if t.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one per sequence, got {tuple(t.shape)}")
    return t
