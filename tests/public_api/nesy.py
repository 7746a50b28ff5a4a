"""The nesy package's public API: one valid call of each callable, for the battery (MAX-2 and
SUM-2 over 3 classes, a 3-node class tree, 4 bags)."""

from __future__ import annotations

import numpy as np
import paperplug_nesy as n
import torch

from paperplug.testing import Sweep

REASONS = {
    "LPSolution": "a result type (what pseudo_labels returns)",
}
R = np.array([0.5, 0.3, 0.2])


def _max(y: tuple[int, ...]) -> int:
    return max(y)


rng0 = np.random.default_rng(0)
X = rng0.normal(size=(40, 4))


def _fitted() -> n.NeSyImbalanceTrainer:
    """A trainer fitted for one epoch on 20 bags of 2 instances (MAX of 3 classes), with LA."""
    y = rng0.integers(3, size=(20, 2))
    bags = X.reshape(20, 2, 4) + y[..., None]
    trainer = n.NeSyImbalanceTrainer(
        M=2, n_classes=3, hidden=8, epochs=1, test_mitigation="la", progress=False
    )
    return trainer.fit(bags, y.max(1))


def sweeps() -> dict[str, Sweep]:
    sigma, total = n.max_of(2, 3), n.sum_of(2, 3)
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, 2, 3))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    s = np.array([2, 1, 2, 0])
    flat = log_probs.reshape(8, 3)
    return {
        "SymbolicFunction": Sweep(
            n.SymbolicFunction, ("max", 2, 3, _max), bad_params={"M": [0], "C": [1], "name": [""]}
        ),
        "max_of": Sweep(n.max_of, (2, 3), bad_params={"M": [0], "C": [1]}),
        "sum_of": Sweep(n.sum_of, (2, 3), bad_params={"M": [0], "C": [1]}),
        "smallest_parent": Sweep(
            n.smallest_parent, ([-1, 0, 0],), bad_params={"parents": [[-1], [1, 0], [-1, 5]]}
        ),
        "from_callable": Sweep(
            n.from_callable, (_max, 2, 3), bad_params={"M": [0], "C": [1], "name": [""]}
        ),
        "forward_map": Sweep(
            n.forward_map, (total, torch.as_tensor(R)), bad_params={"r": [[0.5, 0.5]]}
        ),
        "estimate_marginal": Sweep(
            n.estimate_marginal,
            (total, s),
            {"method": "optimizer", "steps": 3},
            bad_params={
                "s": [[5]],
                "method": ["exact"],
                "steps": [0],
                "lr": [0.0],
                "seed": [-1],
            },
            width=False,
        ),
        "marginal_error": Sweep(n.marginal_error, (sigma, R, 10), bad_params={"n": [0]}),
        "naive_marginal_update": Sweep(
            n.naive_marginal_update, (R, flat, 0.5), bad_params={"gamma": [-0.1, 1.5]}
        ),
        "output_probability": Sweep(
            n.output_probability,
            (sigma, torch.softmax(torch.as_tensor(logits), -1), torch.as_tensor(s)),
            bad_params={"s": [torch.tensor([2, 1, 2, 7])]},
        ),
        "semantic_loss": Sweep(
            n.semantic_loss,
            (total, torch.as_tensor(logits), torch.as_tensor([2, 1, 3, 0])),
            bad_params={"s": [torch.tensor([2, 1, 2, 7])]},
        ),
        "pseudo_labels": Sweep(
            n.pseudo_labels,
            (sigma, log_probs, s, R),
            bad_params={"band": [-1.0], "max_widen": [-1], "s": [[2, 1, 2, 7]]},
        ),
        "count_band": Sweep(
            n.count_band,
            (R, 8),
            {"se": np.full(3, 0.01)},
            bad_params={"n": [0], "z": [-1.0], "floor": [-1.0]},
        ),
        "logit_adjustment": Sweep(
            n.logit_adjustment,
            (flat, R),
            {"target": np.full(3, 1 / 3)},
            bad_params={"tau": [-1.0]},
        ),
        "carot_plan": Sweep(
            n.carot_plan,
            (flat, R),
            {"eta": 1.0, "tau": 1.0, "iterations": 5},
            bad_params={"eta": [0.0], "tau": [0.0], "iterations": [0], "tol": [-1.0]},
        ),
        "choose_la": Sweep(
            n.choose_la,
            (sigma, logits, s, R),
            {"taus": [0.5, 1.0]},
            bad_params={"taus": [[], [-1.0]]},
        ),
        "choose_carot": Sweep(
            n.choose_carot,
            (sigma, log_probs, s, R),
            {"etas": [1.0], "taus": [1.0]},
            bad_params={"etas": [[], [0.0]], "taus": [[], [0.0]]},
        ),
        "bag_accuracy": Sweep(n.bag_accuracy, (sigma, logits.argmax(-1), s)),
        "detection_weights": Sweep(n.detection_weights, (sigma, R)),
        "partial_risk": Sweep(n.partial_risk, (sigma, R, np.eye(3))),
        "class_risk_bound": Sweep(
            n.class_risk_bound,
            (sigma, R, 0.1, 0.05),
            bad_params={"partial": [1.5], "instance_risk": [-0.1]},
        ),
        "report": Sweep(
            n.report,
            (np.array([0, 1, 2, 1]), np.array([0, 1, 2, 2]), 3),
            bad_params={"n_classes": [1]},
            width=False,
        ),
        "NeSyImbalanceTrainer.predict_calibrated": Sweep(_fitted().predict_calibrated, (X[:3],)),
        "SymbolicFunction.proofs": Sweep(sigma.proofs, (2,), bad_params={"s": [5, -1]}),
        "SymbolicFunction.index": Sweep(
            total.index,
            (np.array([0, 4]),),
            bad_params={"s": [[5], [-1]], "name": [""]},
            accepts={"s:empty": "no outputs, no positions: an empty index array"},
        ),
    }
