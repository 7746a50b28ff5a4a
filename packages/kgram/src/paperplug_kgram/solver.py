"""The Solver component: build the two-layer construction for a vocabulary and an order, and
certify it against the exact estimator on the sequences given (or random ones)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from paperplug import Solution
from paperplug.checks import check_scalar
from paperplug_kgram.construction import KGramTransformer, check_code, verify
from paperplug_kgram.estimator import check_tokens


class KGramConstruction:
    """`solve({"vocab_size": S, "k": k, "sequences": optional (n, T) ids})` returns the
    construction (an nn.Module) as the value, its largest deviation from the conditional
    k-gram estimator as the objective, and its sizes as the certificate. Without sequences,
    8 uniformly random ones of length 256 are drawn from `seed`."""

    def __init__(self, base: float = 4.0, alpha: float = 0.0, beta: float | None = None) -> None:
        check_code(base, alpha, beta)
        self.base, self.alpha, self.beta = base, alpha, beta

    def solve(self, problem: Any, *, seed: int | None = None, **kw: Any) -> Solution:
        if kw:
            raise TypeError(f"unknown arguments {sorted(kw)}")
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        if not isinstance(problem, Mapping) or not {"vocab_size", "k"} <= problem.keys():
            raise TypeError(
                "problem must be a dict with 'vocab_size' and 'k' (and optionally 'sequences'), "
                f"got {type(problem).__name__}"
            )
        S, k = problem["vocab_size"], problem["k"]
        names = ("problem['sequences']", "problem['k']", "problem['vocab_size']")
        if problem.get("sequences") is not None:
            x = check_tokens(problem["sequences"], S, k, *names)
        else:
            check_tokens(np.zeros(1, dtype=np.int64), S, k, *names)
            x = np.random.default_rng(seed).integers(0, S, size=(8, 256))
        x = x[None] if x.ndim == 1 else x
        model = KGramTransformer(S, k, base=self.base, alpha=self.alpha, beta=self.beta,
                                 max_len=max(x.shape[1], 16))  # fmt: skip
        error = verify(model, x)
        certificate = {
            "residual_width": model.layout.width,
            "mlp_width": model.mlp_width,
            "base": model.base,
            "beta": model.beta,
            "code_margin": model.margin,
            "positions_checked": int(x.size),
        }
        return Solution(
            value=model, objective=error, certificate=certificate, meta={"alpha": self.alpha}
        )
