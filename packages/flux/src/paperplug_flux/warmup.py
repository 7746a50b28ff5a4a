"""Stage 1, warm-up (§3): plain FedAvg until the global model's federated accuracy plateaus, so
that the latents the descriptors read are meaningful but not yet specialised."""

from __future__ import annotations

import math
from collections.abc import Sequence

from paperplug.checks import check_scalar, check_sequence
from paperplug_flux.decisions import Decision


def warmup_decision(
    accuracies: Sequence[float], *, max_rounds: int, tol: float = 0.05, min_rounds: int = 3
) -> Decision:
    """The plateau rule after the rounds whose federated accuracies are given: stop from round
    `min_rounds` on as soon as the last round gained less than `tol`, and in any case after
    `max_rounds` rounds. The statistic is the last round's accuracy gain (NaN after one round)."""
    accuracies = [
        check_scalar(a, f"accuracies[{i}]", low=0.0, high=1.0)
        for i, a in enumerate(
            check_sequence(accuracies, "accuracies", min_len=0, what="accuracies")
        )
    ]
    max_rounds = check_scalar(max_rounds, "max_rounds", "int", low=1)
    min_rounds = check_scalar(min_rounds, "min_rounds", "int", low=2)
    tol = check_scalar(tol, "tol", "real", low=0)
    r = len(accuracies)
    gain = float(accuracies[-1] - accuracies[-2]) if r >= 2 else math.nan
    if r >= max_rounds:
        outcome = f"stop: at the cap, max_rounds={max_rounds}"
    elif r >= min_rounds and gain < tol:
        outcome = f"stop: plateau at round {r}"
    else:
        outcome = "continue"
    return Decision("accuracy gain", gain, tol, outcome)


def warmup_finished(
    accuracies: Sequence[float], *, max_rounds: int, tol: float = 0.05, min_rounds: int = 3
) -> bool:
    """True once the warm-up should stop after the rounds whose accuracies are given."""
    decision = warmup_decision(accuracies, max_rounds=max_rounds, tol=tol, min_rounds=min_rounds)
    return decision.outcome.startswith("stop")
