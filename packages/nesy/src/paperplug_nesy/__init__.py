"""Learning imbalances in neurosymbolic learning (NeurIPS 2025): a classifier trained only from
σ(y_1..y_M) over bags, the hidden-label marginal estimated from those weak labels, and the
imbalance σ induces mitigated by a batch LP (training) or logit adjustment / CAROT (test).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "SymbolicFunction": ".symbolic",
        "max_of": ".symbolic",
        "sum_of": ".symbolic",
        "smallest_parent": ".symbolic",
        "from_callable": ".symbolic",
        "forward_map": ".marginal",
        "estimate_marginal": ".marginal",
        "marginal_error": ".marginal",
        "naive_marginal_update": ".marginal",
        "output_probability": ".semantic",
        "semantic_loss": ".semantic",
        "pseudo_labels": ".lp",
        "count_band": ".lp",
        "LPSolution": ".lp",
        "logit_adjustment": ".calibration",
        "carot_plan": ".calibration",
        "choose_la": ".calibration",
        "choose_carot": ".calibration",
        "bag_accuracy": ".calibration",
        "detection_weights": ".risk",
        "partial_risk": ".risk",
        "class_risk_bound": ".risk",
        "NeSyImbalanceTrainer": ".trainer",
        "report": ".metrics",
    },
)
