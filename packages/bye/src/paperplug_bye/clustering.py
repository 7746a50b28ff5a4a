"""Stage 4, unsupervised clustering of the sensitive-layer scores (paper §3.3).

Each sample's score is its mean entropy over the sensitive layers; a two-component GMM on the
scores splits the data, and the low-entropy component (attention collapsed on a trigger) is
flagged as poisoned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from sklearn.mixture import GaussianMixture

from paperplug.checks import check_choice, check_scalar, check_type
from paperplug_bye.profiling import VARIANTS, Variant, check_entropy


@dataclass
class Clustering:
    """Flags (True = suspected poisoned), the per-sample scores, and the two clusters' means."""

    flags: np.ndarray
    scores: np.ndarray
    means: tuple[float, float]
    weights: tuple[float, float]


def suspicion_scores(
    entropy: np.ndarray,
    layers: Sequence[int],
    *,
    variant: Variant = "collapse",
    standardize: bool | None = None,
) -> np.ndarray:
    """Mean entropy over `layers`; z-score each layer first if `standardize` (None: robust only).

    Raw means (the paper) let a layer with a large collapse gap dominate; z-scores give every
    selected layer the same vote.
    """
    E = check_entropy(entropy)
    check_choice(variant, "variant", VARIANTS)
    if standardize is not None:
        check_type(standardize, "standardize", bool)
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Iterable):
        raise TypeError(f"layers must be a list of layer indices, got {type(layers).__name__}")
    layers = [check_scalar(i, f"layers[{j}]", "int") for j, i in enumerate(layers)]
    if not layers:
        raise ValueError(
            "layers is empty: no sensitive layer to score, BYE cannot separate samples (see "
            "profile_layers)"
        )
    if min(layers) < 0 or max(layers) >= E.shape[1]:
        raise ValueError(f"layers {layers} out of range 0..{E.shape[1] - 1}")
    cols = E[:, layers]
    if standardize is None:
        standardize = variant == "robust"
    if standardize:
        std = cols.std(0)
        cols = (cols - cols.mean(0)) / np.where(std > 0, std, 1.0)
    return cols.mean(1)


def cluster_suspicious(
    entropy: np.ndarray,
    layers: Sequence[int],
    *,
    variant: Variant = "collapse",
    direction: Literal["low", "minority"] = "low",
    standardize: bool | None = None,
    seed: int = 0,
) -> Clustering:
    """Two-component GMM on the sensitive-layer scores; flag the low-mean component.

    `direction="minority"` flags the smaller component instead (an opt-in for triggers that
    raise the entropy rather than collapse it; not in the paper).
    """
    check_choice(direction, "direction", ("low", "minority"))
    check_scalar(seed, "seed", "int", low=0)
    scores = suspicion_scores(entropy, layers, variant=variant, standardize=standardize)
    gmm = GaussianMixture(n_components=2, random_state=seed).fit(scores.reshape(-1, 1))
    labels = gmm.predict(scores.reshape(-1, 1))
    means, weights = gmm.means_.ravel(), gmm.weights_
    flagged = int(np.argmin(means)) if direction == "low" else int(np.argmin(weights))
    order = np.argsort(means)
    return Clustering(
        flags=labels == flagged,
        scores=scores,
        means=(float(means[order[0]]), float(means[order[1]])),
        weights=(float(weights[order[0]]), float(weights[order[1]])),
    )
