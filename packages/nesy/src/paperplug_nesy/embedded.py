"""The embedded default, shared by demo.py and bench/run.py: scikit-learn's digits made
long-tailed (class c kept in proportion ρ^(−c/9)), bags of M digits labelled only by σ, and a
balanced test set of held-out digits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperplug.extras import requires_extra
from paperplug_nesy.symbolic import SymbolicFunction


@dataclass
class BagData:
    bags: np.ndarray  # (N, M, 64) features
    s: np.ndarray  # (N,) weak labels σ(y)
    hidden: np.ndarray  # (N, M) the gold labels, for evaluation only
    test_X: np.ndarray  # (n, 64) balanced held-out digits
    test_y: np.ndarray
    marginal: np.ndarray  # the gold class frequencies of the instances in the bags


def long_tailed_bags(sigma: SymbolicFunction, n_bags: int = 2000, rho: float = 50.0, seed: int = 0,
                     test_per_class: int = 50) -> BagData:  # fmt: skip
    """Bags drawn from a long-tailed pool: P(class c) ∝ ρ^(−c/9) (ρ = 1: balanced)."""
    with requires_extra("paperplug-nesy", "demo", "the embedded default"):
        from sklearn.datasets import load_digits

    if rho < 1:
        raise ValueError(f"rho must be >= 1, got {rho}")
    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    rng = np.random.default_rng(seed)
    test = np.concatenate(
        [rng.permutation(np.flatnonzero(y == c))[:test_per_class] for c in range(10)]
    )
    pool = np.setdiff1d(np.arange(len(y)), test)
    weights = rho ** (-y[pool] / 9.0)
    draws = rng.choice(pool, size=(n_bags, sigma.M), p=weights / weights.sum())
    hidden = y[draws]
    s = np.array([sigma(h) for h in hidden])
    marginal = np.bincount(hidden.ravel(), minlength=10) / hidden.size
    return BagData(X[draws], s, hidden, X[test], y[test], marginal)


METHODS = ("SL", "SL + LA", "SL + CAROT", "LP (estimated r)", "LP (true r)")


def compare(data: BagData, sigma: SymbolicFunction, *, M: int, seed: int = 0, epochs: int = 20,
            n_bags: int | None = None) -> dict[str, dict]:  # fmt: skip
    """The paper's comparison on one dataset: the semantic loss alone, with logit adjustment or
    CAROT toward the balanced test prior, and the batch LP with the estimated or the true
    marginal. Returns per method the report on the balanced test set and per-class accuracy."""
    from paperplug_nesy.metrics import per_class_accuracy, report
    from paperplug_nesy.trainer import NeSyImbalanceTrainer

    kind = "max" if sigma.name.startswith("MAX") else "sum"
    common = {"sigma": kind, "M": M, "seed": seed, "epochs": epochs, "progress": False}
    carot = NeSyImbalanceTrainer(test_mitigation="carot", test_prior="uniform", **common)
    la = NeSyImbalanceTrainer(test_mitigation="la", test_prior="uniform", **common)
    # the official per-batch LP, as this comparison was first measured (bench --lp: both scopes)
    lp_est = NeSyImbalanceTrainer(train_mitigation="lp", lp_scope="batch", **common)
    lp_true = NeSyImbalanceTrainer(
        train_mitigation="lp", lp_scope="batch", marginal=data.marginal, **common
    )
    for model in (carot, la, lp_est, lp_true):
        model.fit(data.bags, data.s)
    predictions = {
        "SL": carot.predict(data.test_X),
        "SL + LA": la.predict_calibrated(data.test_X),
        "SL + CAROT": carot.predict_calibrated(data.test_X),
        "LP (estimated r)": lp_est.predict(data.test_X),
        "LP (true r)": lp_true.predict(data.test_X),
    }
    error = float(np.abs(lp_est.marginal_ - data.marginal).sum())
    return {
        name: {**report(p, data.test_y), "per_class": per_class_accuracy(p, data.test_y),
               "marginal_l1": error}
        for name, p in predictions.items()
    }  # fmt: skip
