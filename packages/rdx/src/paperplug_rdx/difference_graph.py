"""The locally biased difference and its affinities (RDX §3.2): where model 1 puts i and j
much closer than model 0 does — relative to how close they are — the affinity A10 is high
("model 1 considers them similar, model 0 does not"); A01 the other way round."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_choice, check_scalar
from paperplug_rdx.validation import check_square

DIFFERENCES = ("locally_biased", "standard")


def difference(
    D0: np.ndarray, D1: np.ndarray, *, gamma: float, kind: str = "locally_biased"
) -> np.ndarray:
    """Δ10 = tanh(γ·(D1 − D0) / (min(D0, D1) + 1)) (locally biased: small distances weigh more),
    or D1 − D0 ("standard"). Δ01 = −Δ10."""
    D0 = check_square(D0, "D0")
    D1 = check_square(D1, "D1", len(D0))
    check_scalar(gamma, "gamma", low=0, inclusive="neither")
    check_choice(kind, "kind", DIFFERENCES)
    if kind == "locally_biased":
        return np.tanh(gamma * (D1 - D0) / (np.minimum(D0, D1) + 1.0))
    return D1 - D0


def affinities(delta10: np.ndarray, beta: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    """(A10, A01) = (exp(−β·Δ10), exp(β·Δ10))."""
    delta10 = check_square(delta10, "delta10")
    check_scalar(beta, "beta", low=0, inclusive="neither")
    return np.exp(-beta * delta10), np.exp(beta * delta10)
