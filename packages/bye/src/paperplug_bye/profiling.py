"""Stage 3, sensitive-layer profiling by bimodal separation (paper §3.3).

Per layer, a two-component GMM on the entropy column; the layer is sensitive when the means
are further apart than `separation` times the summed standard deviations. The KL divergence
from the low-mean to the high-mean Gaussian ranks the layers.

Three rules pick the sensitive layers:
- "paper": the official rule alone (any bimodal layer).
- "robust": the low-mean component must also be a minority holding at least `min_weight`.
- "collapse" (the default here, not in the paper): "robust", and the low mode must be an
  attention collapse: its mean entropy at least `min_gap` nats below the high mode's
  (log 3: the low rows spread their attention over at most a third as many image tokens, in
  perplexity exp(H)). Clean data splits into modes too (answer classes attend differently),
  but rarely by that much; when no layer passes, BYE reports "no backdoor found".
`test="ashman"` (opt-in) uses Ashman's D = sqrt(2)|mu1-mu2| / sqrt(sd1^2 + sd2^2) > separation
instead of the paper's test, which still admits a small low mode whose collapse is partial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from sklearn.mixture import GaussianMixture  # imported here: its first import draws from `random`

from paperplug.checks import check_array, check_choice, check_scalar

Variant = Literal["collapse", "paper", "robust"]
SeparationTest = Literal["paper", "ashman"]
VARIANTS = ("collapse", "paper", "robust")
MIN_GAP = math.log(3)  # nats: the low mode attends to at most 1/3 as many image tokens


@dataclass
class LayerFit:
    """One layer's two-component GMM, the low-mean component first."""

    means: tuple[float, float]
    stds: tuple[float, float]
    weights: tuple[float, float]
    kl: float
    ashman_d: float
    bimodal: bool
    minority_low: bool

    @property
    def gap(self) -> float:
        """How far the low mode's mean entropy lies below the high mode's (nats)."""
        return self.means[1] - self.means[0]


@dataclass
class LayerProfile:
    """Which layers separate the samples into two modes, and which of them the score averages.

    `scored` is `sensitive` under the paper and robust rules; under the collapse rule it is
    the sensitive layer with the largest gap (the clearest collapse), so that a layer whose
    modes are answer classes cannot dilute it.
    """

    sensitive: list[int]
    kl: np.ndarray
    fits: list[LayerFit] = field(repr=False)
    variant: Variant = "collapse"
    scored: list[int] = field(default_factory=list)

    @property
    def ranking(self) -> list[int]:
        """Layers by decreasing KL divergence between their two components."""
        return [int(i) for i in np.argsort(-self.kl, kind="stable")]

    @property
    def gaps(self) -> np.ndarray:
        return np.array([f.gap for f in self.fits])


def gaussian_kl(mean1: float, std1: float, mean2: float, std2: float) -> float:
    """KL(N(mean1, std1^2) || N(mean2, std2^2)) in closed form."""
    check_scalar(mean1, "mean1")
    check_scalar(mean2, "mean2")
    check_scalar(std1, "std1", low=0, inclusive="neither")
    check_scalar(std2, "std2", low=0, inclusive="neither")
    return float(np.log(std2 / std1) + (std1**2 + (mean1 - mean2) ** 2) / (2 * std2**2) - 0.5)


def fit_layer(
    values: np.ndarray,
    *,
    separation: float = 2.0,
    seed: int = 0,
    min_weight: float = 0.02,
    test: SeparationTest = "paper",
) -> LayerFit:
    """Two-component GMM on one entropy column and the bimodal-separation test.

    test="paper": |mu1-mu2| > s(sd1+sd2) (paper §3.3); test="ashman": Ashman's D > s.
    """
    values = check_array(values, "values", ndim=1, min_samples=2)
    _check_rule(separation, seed, min_weight, test)
    gmm = GaussianMixture(n_components=2, random_state=seed).fit(values.reshape(-1, 1))
    means = gmm.means_.ravel()
    stds = np.sqrt(gmm.covariances_.ravel())
    order = np.argsort(means)
    (m0, m1), (s0, s1), (w0, w1) = means[order], stds[order], gmm.weights_[order]
    ashman_d = float(np.sqrt(2.0) * (m1 - m0) / np.hypot(s0, s1))
    return LayerFit(
        means=(float(m0), float(m1)),
        stds=(float(s0), float(s1)),
        weights=(float(w0), float(w1)),
        kl=gaussian_kl(m0, s0, m1, s1),
        ashman_d=ashman_d,
        bimodal=bool(
            ashman_d > separation if test == "ashman" else abs(m1 - m0) > separation * (s0 + s1)
        ),
        minority_low=bool(min_weight <= w0 <= 0.5),
    )


def profile_layers(
    entropy: np.ndarray,
    *,
    separation: float = 2.0,
    variant: Variant = "collapse",
    seed: int = 0,
    min_weight: float = 0.02,
    test: SeparationTest = "paper",
    min_gap: float = MIN_GAP,
) -> LayerProfile:
    """Sensitive layers of a (samples, layers) entropy matrix under one rule (module docstring).

    `min_gap` is in the matrix's units (nats; divide by log N for relative entropies).
    """
    E = check_entropy(entropy)
    check_choice(variant, "variant", VARIANTS)
    _check_rule(separation, seed, min_weight, test)
    check_scalar(min_gap, "min_gap", low=0)
    fits = [
        fit_layer(E[:, layer], separation=separation, seed=seed, min_weight=min_weight, test=test)
        for layer in range(E.shape[1])
    ]
    sensitive = [
        i
        for i, f in enumerate(fits)
        if f.bimodal
        and (variant == "paper" or f.minority_low)
        and (variant != "collapse" or f.gap >= min_gap)
    ]
    scored = sensitive
    if variant == "collapse" and sensitive:
        scored = [max(sensitive, key=lambda i: fits[i].gap)]
    return LayerProfile(sensitive, np.array([f.kl for f in fits]), fits, variant, scored)


def _check_rule(separation: Any, seed: Any, min_weight: Any, test: Any) -> None:
    """The separation test's settings: s > 0, a seed, a minority weight in [0, 0.5]."""
    check_scalar(separation, "separation", low=0, inclusive="neither")
    check_scalar(seed, "seed", "int", low=0)
    check_scalar(min_weight, "min_weight", low=0, high=0.5)
    check_choice(test, "test", ("paper", "ashman"))


def check_entropy(entropy: Any, name: str = "entropy") -> np.ndarray:
    """A finite (samples >= 2, layers >= 1) float matrix, or an error naming `name`."""
    E = check_array(entropy, name, ndim=2, min_samples=2)
    if E.shape[1] < 1:
        raise ValueError(f"{name} must hold at least one layer (column), got shape {E.shape}")
    return E
