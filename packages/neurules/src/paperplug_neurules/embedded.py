"""The embedded default's data, shared by demo.py and bench/run.py: scikit-learn's bundled
tables (offline) and data generated from a planted rule list, so learned thresholds can be
checked against the truth."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_choice, check_scalar, check_seed, check_sequence

# (feature, low, high, label) in order, then the default label 0
PLANTED_RULES: tuple[tuple[int, float, float, int], ...] = (
    (0, 0.7, np.inf, 1),
    (1, -np.inf, 0.25, 1),
    (2, 0.35, 0.65, 2),
)
PLANTED_DEFAULT = 0

Dataset = tuple[np.ndarray, np.ndarray, list[str]]


def planted_rule_data(
    n: int = 2000, n_features: int = 6, noise: float = 0.05, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """X ~ U[0,1]^d labelled by PLANTED_RULES (first match, else 0), `noise` labels resampled."""
    check_scalar(n, "n", "int", low=1)
    check_scalar(n_features, "n_features", "int", low=3)  # the planted list uses features 0-2
    check_scalar(noise, "noise", low=0, high=1)
    check_seed(seed, "seed", allow_none=False)
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, n_features))
    y = np.full(n, PLANTED_DEFAULT)
    open_rows = np.ones(n, dtype=bool)
    for feature, low, high, label in PLANTED_RULES:
        hit = open_rows & (X[:, feature] > low) & (X[:, feature] < high)
        y[hit] = label
        open_rows &= ~hit
    flip = rng.uniform(size=n) < noise
    y[flip] = rng.integers(0, 3, size=flip.sum())
    return X, y


def datasets(
    names: tuple[str, ...] = ("breast_cancer", "wine", "iris", "planted"), seed: int = 0
) -> dict[str, Dataset]:
    """The named datasets as (X, y, feature names): breast_cancer, wine, iris and digits from
    scikit-learn, `planted` (planted_rule_data with `seed`) and `synthetic` (fresh with each
    `seed`: scikit-learn's make_classification, 1000 rows, 10 features of which 5 informative,
    3 classes of 2 clusters each)."""
    from sklearn.datasets import (
        load_breast_cancer,
        load_digits,
        load_iris,
        load_wine,
        make_classification,
    )

    check_scalar(seed, "seed", "int", low=0)
    loaders = {
        "breast_cancer": load_breast_cancer,
        "wine": load_wine,
        "iris": load_iris,
        "digits": load_digits,
    }
    known = [*loaders, "planted", "synthetic"]
    for i, name in enumerate(check_sequence(names, "names", str, what="dataset names")):
        check_choice(name, f"names[{i}]", known)
    out = {}
    for name in names:
        if name == "planted":
            X, y = planted_rule_data(seed=seed)
            out[name] = (X, y, [f"x{i}" for i in range(X.shape[1])])
        elif name == "synthetic":
            X, y = make_classification(1000, n_features=10, n_informative=5, n_classes=3,
                                       random_state=seed)  # fmt: skip
            out[name] = (X, y, [f"x{i}" for i in range(X.shape[1])])
        else:
            data = loaders[name]()
            features = [str(f).replace(" ", "_") for f in data.feature_names]
            out[name] = (data.data, data.target, features)
    return out
