"""Population averaging (PA, paper §3.2): for a labelled concept, average the population
activity over a few occurrences (at a chosen step offset), keep the subpopulation of neurons
that stay within τ of that mean on every training occurrence, and detect the concept wherever
the subpopulation's mean squared deviation from the template is at most a threshold: the
paper's is the largest deviation seen in training (`threshold="max-train"`), biased low since
the template was fitted on those same few occurrences (held-out TPR 0.4–0.8); ours, the
default (`threshold="negatives"`), is the largest one that detects at most `fpr` of the fit
sequence's other tokens (its negatives, never used by the template). τ is swept and chosen by balanced accuracy (plain accuracy picks "all neurons"
when the concept is rare); the swept (FPR, TPR) points give an ROC and its AUC."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from paperplug.checks import (
    check_array,
    check_choice,
    check_consistent_length,
    check_is_fitted,
    check_scalar,
    check_sequence,
    check_type,
)

THRESHOLDS = ("negatives", "max-train")

#: the paper's τ sweep: 100, 30, 20, 10, 3, then 0.8^i for i < 35.
TAUS: tuple[float, ...] = (100.0, 30.0, 20.0, 10.0, 3.0, *tuple(0.8**i for i in range(35)))


@dataclass
class Template:
    """A PA chunk: the subpopulation `mask` (neurons), its mean `values`, the detection
    `threshold` (max training MSE) and the τ that made it."""

    mask: np.ndarray
    values: np.ndarray
    threshold: float
    tau: float

    @property
    def n_neurons(self) -> int:
        return int(self.mask.sum())


def token_positions(positions: Any, n: int, name: str = "positions") -> np.ndarray:
    """Sorted unique integer token positions inside [0, n), checked (`name` in the message)."""
    check_type(name, "name", str)
    if not name:
        raise ValueError("name must be a non-empty string (the argument's name)")
    check_scalar(n, "n", "int", low=1)
    pos = check_array(positions, name, dtype="int", ndim=1)
    if pos.min() < 0 or pos.max() >= n:
        raise ValueError(
            f"{name} must be token positions in [0, {n}), got [{pos.min()}, {pos.max()}]"
        )
    return np.unique(pos)


def shifted(positions: Any, offset: int, n: int, name: str = "positions") -> np.ndarray:
    """Concept positions moved by `offset` steps (−2 … 2 in the paper), dropping any that fall
    outside the sequence."""
    pos = token_positions(positions, n, name) + int(offset)
    pos = pos[(pos >= 0) & (pos < n)]
    if pos.size == 0:
        raise ValueError(f"no position stays inside the sequence after offset {offset}")
    return pos


def pa_template(H: Any, train_positions: Any, tau: float) -> Template:
    """The mean activity M over the training occurrences, the neurons with |h − M| < τ on every
    one of them, and the largest training MSE over that subpopulation as the threshold."""
    H = check_array(H, "H", ndim=2)
    pos = token_positions(train_positions, len(H), "train_positions")
    check_scalar(tau, "tau", low=0, inclusive="neither")
    X = H[pos]
    mean = X.mean(0)
    mask = (np.abs(X - mean) < tau).all(0)
    values = mean[mask]
    threshold = float(((X[:, mask] - values) ** 2).mean(1).max()) if mask.any() else 0.0
    return Template(mask, values, threshold, float(tau))


def pa_deviation(H: Any, template: Template) -> np.ndarray:
    """Each token's mean squared deviation from the template over the subpopulation
    (+inf everywhere when the subpopulation is empty: nothing can be detected)."""
    H = check_array(H, "H", ndim=2)
    check_type(template, "template", Template, what="a Template (pa_template's)")
    if H.shape[1] != template.mask.shape[0]:
        raise ValueError(f"H has {H.shape[1]} neurons, the template {template.mask.shape[0]}")
    if not template.mask.any():
        return np.full(len(H), np.inf)
    return ((H[:, template.mask] - template.values) ** 2).mean(1)


def negatives_threshold(deviations: np.ndarray, fpr: float) -> float:
    """The largest threshold under which at most a share `fpr` of these negatives'
    deviations lie (detection is deviation <= threshold); +inf where nothing is detected."""
    deviations = check_array(deviations, "deviations", ndim=1, finite=False)
    if np.isnan(deviations).any() or (deviations < 0).any():
        raise ValueError("deviations must be mean squared deviations (>= 0 or +inf, not NaN)")
    check_scalar(fpr, "fpr", low=0, high=1, inclusive="left")
    ordered = np.sort(deviations)
    return float(np.nextafter(ordered[int(np.floor(fpr * len(ordered)))], -np.inf))


def detection_rates(detected: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """TPR, FPR, accuracy and balanced accuracy of boolean detections against labels."""
    detected = check_array(detected, "detected", dtype="bool", ndim=1)
    labels = check_array(labels, "labels", dtype="bool", ndim=1)
    check_consistent_length(detected=detected, labels=labels)
    pos, neg = labels.sum(), (~labels).sum()
    tpr = float((detected & labels).sum() / pos) if pos else float("nan")
    fpr = float((detected & ~labels).sum() / neg) if neg else float("nan")
    return {
        "tpr": tpr,
        "fpr": fpr,
        "accuracy": float((detected == labels).mean()),
        "balanced_accuracy": (tpr + 1 - fpr) / 2,
    }


def sweep_auc(fprs: Sequence[float], tprs: Sequence[float]) -> float:
    """Area under the ROC traced by the τ sweep (points joined to (0,0) and (1,1))."""
    for name, rates in (("fprs", fprs), ("tprs", tprs)):
        for i, rate in enumerate(check_sequence(rates, name, min_len=0)):
            check_scalar(rate, f"{name}[{i}]", low=0, high=1)
    check_consistent_length(fprs=list(fprs), tprs=list(tprs))
    pts = sorted({(0.0, 0.0), (1.0, 1.0), *zip(fprs, tprs, strict=True)})
    x, y = np.array(pts).T
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2))


class PopulationAveraging:
    """PA end to end: `fit(H, positions)` draws `n_train` occurrences (seeded), sweeps τ and
    keeps the template of best balanced accuracy on the fit sequence; `decision_function`
    is −deviation (higher = more concept-like), `predict` the thresholded detection.
    threshold: "negatives" (at most `fpr` of the fit sequence's negatives detected) or
    "max-train" (the paper's: the largest training deviation)."""

    def __init__(
        self,
        n_train: int = 5,
        offset: int = 0,
        taus: Sequence[float] = TAUS,
        seed: int = 0,
        threshold: str = "negatives",
        fpr: float = 0.01,
    ) -> None:
        self.n_train, self.offset, self.taus, self.seed = n_train, offset, taus, seed
        self.threshold, self.fpr = threshold, fpr
        self._check_params()

    def _check_params(self) -> list[float]:
        """The parameters checked; the τ grid as floats."""
        check_scalar(self.n_train, "n_train", "int", low=1)
        check_scalar(self.offset, "offset", "int", low=-2, high=2)  # the paper's offsets
        check_choice(self.threshold, "threshold", THRESHOLDS)
        check_scalar(self.fpr, "fpr", low=0, high=1, inclusive="left")
        check_scalar(self.seed, "seed", "int", low=0)
        return [
            check_scalar(t, f"taus[{i}]", low=0, inclusive="neither")
            for i, t in enumerate(check_sequence(self.taus, "taus"))
        ]

    def fit(self, H: Any, positions: Any) -> PopulationAveraging:
        H = check_array(H, "H", ndim=2)
        taus = self._check_params()
        pos = shifted(positions, self.offset, len(H))
        if pos.size < self.n_train:
            raise ValueError(f"positions holds {pos.size} occurrences < n_train={self.n_train}")
        rng = np.random.default_rng(self.seed)
        self.train_positions_ = np.sort(rng.choice(pos, self.n_train, replace=False))
        labels = np.zeros(len(H), dtype=bool)
        labels[pos] = True
        self.sweep_, best = [], None
        for tau in taus:
            template = pa_template(H, self.train_positions_, tau)
            deviation = pa_deviation(H, template)
            if self.threshold == "negatives" and (~labels).any():
                template.threshold = negatives_threshold(deviation[~labels], self.fpr)
            rates = detection_rates(deviation <= template.threshold, labels)
            self.sweep_.append({"tau": tau, "n_neurons": template.n_neurons, **rates})
            if (
                best is None or rates["balanced_accuracy"] >= best[0]
            ):  # ties: the smaller subpopulation
                best = (rates["balanced_accuracy"], template)
        self.template_ = best[1]
        self.sweep_auc_ = sweep_auc(
            [r["fpr"] for r in self.sweep_], [r["tpr"] for r in self.sweep_]
        )
        return self

    def decision_function(self, H: Any) -> np.ndarray:
        check_is_fitted(self, "template_")
        return -pa_deviation(H, self.template_)

    def predict(self, H: Any) -> np.ndarray:
        check_is_fitted(self, "template_")
        return pa_deviation(H, self.template_) <= self.template_.threshold

    def evaluate(self, H: Any, positions: Any) -> dict[str, float]:
        """TPR/FPR/balanced accuracy of the detector and the AUC of its score on (held-out)
        activations with the concept at `positions` (shifted by the same offset)."""
        H = check_array(H, "H", ndim=2)
        labels = np.zeros(len(H), dtype=bool)
        labels[shifted(positions, self.offset, len(H))] = True
        rates = detection_rates(self.predict(H), labels)
        score = np.nan_to_num(self.decision_function(H), neginf=-1e300)
        auc = float(roc_auc_score(labels, score)) if 0 < labels.sum() < len(H) else float("nan")
        return {**rates, "auc": auc}


def pa_layers(
    states: Any, positions: Any, test_states: Any = None, test_positions: Any = None, **cfg: Any
) -> list[dict[str, float]]:
    """PA per layer of a (layers, tokens, neurons) stack (e.g. `hf_hidden_states`): the chosen
    τ, subpopulation size, sweep AUC and, given held-out states, test TPR/FPR/AUC."""
    states = check_array(states, "states", ndim=3)
    token_positions(positions, states.shape[1], "positions")
    if (test_states is None) != (test_positions is None):
        raise ValueError("give test_states and test_positions together")
    if test_states is not None:
        test_states = check_array(
            test_states, "test_states", ndim=3, shape=(len(states), None, states.shape[2])
        )
        token_positions(test_positions, test_states.shape[1], "test_positions")
    rows = []
    for layer in range(states.shape[0]):
        pa = PopulationAveraging(**cfg).fit(states[layer], positions)
        row = {"layer": layer, "tau": pa.template_.tau, "n_neurons": pa.template_.n_neurons,
               "sweep_auc": pa.sweep_auc_}  # fmt: skip
        if test_states is not None:
            test = pa.evaluate(test_states[layer], test_positions)
            row.update({f"test_{k}": test[k] for k in ("tpr", "fpr", "auc")})
        rows.append(row)
    return rows
