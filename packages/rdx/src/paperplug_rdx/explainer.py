"""RDX as an Explainer: two representations of the same items in, explanation grids of how
they differ out, in both directions, with their binary success rates.

`explain(None, (R0, R1))` takes the representations; `explain((model_0, model_1), inputs,
layer=...)` extracts them from a named layer of two torch modules (or Hugging Face model
names/paths with `layer=int`) first."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug import Explanation
from paperplug.checks import (
    check_array,
    check_choice,
    check_consistent_length,
    check_scalar,
    check_type,
)
from paperplug_rdx.alignment import align_linear, label_guidance
from paperplug_rdx.clustering import SEEDINGS, seeded_neighbourhoods, spectral_clusters
from paperplug_rdx.difference_graph import DIFFERENCES, affinities, difference
from paperplug_rdx.distances import METHODS, distances
from paperplug_rdx.grids import neighbourhood_grid
from paperplug_rdx.knn import ranks_of_pairs, sparse_difference
from paperplug_rdx.metrics import bsr, debiased_cka, mbsr

DIRECTIONS = ("1_over_0", "0_over_1")  # "model 1 considers similar, model 0 does not", and back


class RDX:
    """Representational difference explanations (Kondapaneni et al., NeurIPS 2025).

    γ = 0.1 as the official MNIST configs; `gamma=None` scales it with the number of items
    (γ = 80/n, the official code's `gamma_scale`). n_clusters
    grids per direction of `grid_size` items; a cluster is shown only when its
    items are, on average, closer in the model said to consider them similar (mean Δ below
    −`min_difference`), so identical representations give no explanation at all."""

    def __init__(
        self,
        distance: str = "neighborhood",
        diff: str = "locally_biased",
        gamma: float | None = 0.1,
        beta: float = 5.0,
        n_clusters: int = 3,
        grid_size: int = 9,
        seeding: str = "spectral",
        min_difference: float = 0.05,
        align: bool = False,
        knn: int | None = None,
        seed: int = 0,
    ) -> None:
        self.distance = check_choice(distance, "distance", METHODS)
        self.diff = check_choice(diff, "diff", DIFFERENCES)
        self.gamma = check_scalar(gamma, "gamma", low=0, inclusive="neither", allow_none=True)
        self.beta = check_scalar(beta, "beta", low=0, inclusive="neither")
        self.n_clusters = check_scalar(n_clusters, "n_clusters", "int", low=1)
        self.grid_size = check_scalar(grid_size, "grid_size", "int", low=2)
        self.seeding = check_choice(seeding, "seeding", SEEDINGS)
        self.min_difference = check_scalar(min_difference, "min_difference", low=0)
        self.align = check_type(align, "align", bool)
        self.knn = check_scalar(knn, "knn", "int", low=1, allow_none=True)
        self.seed = check_scalar(seed, "seed", "int", low=0)

    def representations(self, model: Any, inputs: Any, layer: Any) -> tuple[np.ndarray, np.ndarray]:
        """(R0, R1), checked: given as `inputs` when `model` is None, else read from the two
        models at `layer`. Their widths may differ (two models), their items may not."""
        if model is None:
            pair = check_type(inputs, "inputs", (tuple, list), what="the pair (R0, R1)")
            if len(pair) != 2:
                raise ValueError(
                    f"inputs must be the pair (R0, R1) when model is None, got {len(pair)} items"
                )
            raw, names = pair, ("inputs[0]", "inputs[1]")
        else:
            models = check_type(model, "model", (tuple, list), what="a pair (model_0, model_1)")
            if len(models) != 2:
                raise ValueError(f"model must be a pair (model_0, model_1), got {len(models)}")
            if layer is None:
                raise ValueError(
                    "layer=... names the layer (torch modules) or hidden-state index (HF models)"
                )
            from paperplug_rdx.features import hf_hidden_states, layer_features

            extract = layer_features if isinstance(layer, str) else hf_hidden_states
            raw = [extract(m, inputs, layer) for m in models]
            names = (f"model[0]'s layer {layer!r}", f"model[1]'s layer {layer!r}")
        R0, R1 = (
            check_array(r, name, ndim=2, min_samples=3, copy=True)
            for r, name in zip(raw, names, strict=True)
        )
        check_consistent_length(**{names[0]: R0, names[1]: R1})
        return R0, R1

    def explain(
        self, model: Any, inputs: Any, *, target: Any = None, layer: Any = None, labels: Any = None
    ) -> Explanation:
        """Grids per direction; `labels` (optional) guide the distances (cross-label pairs far)."""
        if target is not None:
            raise ValueError("target: RDX compares two models' representations; it reads none")
        if layer is not None and (isinstance(layer, bool) or not isinstance(layer, (str, int))):
            raise TypeError(
                f"layer must be a module name (str) or a hidden-state index, got {layer!r}"
            )
        if model is None and layer is not None:
            raise ValueError("layer is read from models: with model=None, inputs are (R0, R1)")
        R0, R1 = self.representations(model, inputs, layer)
        n = len(R0)
        if self.knn is not None:
            check_scalar(self.knn, "knn", "int", low=1, high=n - 1)
        if labels is not None:
            labels = np.asarray(labels)
            if labels.ndim != 1:
                raise ValueError(f"labels must be 1-D (one per item), got shape {labels.shape}")
            check_consistent_length(inputs=R0, labels=labels)
        gamma = self.gamma if self.gamma is not None else 80.0 / n
        if self.align:  # each direction on the representation mapped onto the other
            R0_for_10, R1_for_01 = (
                align_linear(R0, R1, seed=self.seed),
                align_linear(R1, R0, seed=self.seed),
            )
        else:
            R0_for_10, R1_for_01 = R0, R1
        grids: dict[str, list[list[int]]] = {}
        meta: dict[str, Any] = {"bsr": {}, "labels": {}, "mean_difference": {}}
        for direction in DIRECTIONS:
            A, D_close, D_far, R_close = self._graph(direction, R0_for_10 if direction == "1_over_0" else R0,
                                                     R1 if direction == "1_over_0" else R1_for_01, gamma, labels)  # fmt: skip
            if self.seeding == "spectral":
                cluster = spectral_clusters(A, self.n_clusters, seed=self.seed)
                candidates = range(1, self.n_clusters + 1)  # 0 is the null cluster
            else:
                cluster = seeded_neighbourhoods(
                    A, self.n_clusters, size=self.grid_size, method=self.seeding
                )
                candidates = range(1, self.n_clusters + 1)
            shown, scores, diffs = [], [], []
            for c in sorted(candidates, reverse=True):  # highest affinity first
                members = np.flatnonzero(cluster == c)
                if len(members) < 2:
                    continue
                grid = neighbourhood_grid(members, A, R_close, self.grid_size)
                mean_delta = self._mean_difference(A, grid)
                if mean_delta > -self.min_difference:
                    continue  # not closer in this model than in the other: nothing to show
                Dc, Df = (
                    (D_close, D_far)
                    if D_close is not None
                    else self._grid_ranks(direction, R0, R1, grid)
                )
                shown.append(grid.tolist())
                scores.append(bsr(np.arange(len(grid)) if D_close is None else grid, Dc, Df))
                diffs.append(mean_delta)
            grids[direction] = shown
            meta["bsr"][direction], meta["mean_difference"][direction] = scores, diffs
            meta["labels"][direction] = cluster.tolist()
        meta["mbsr"] = mbsr([s for d in DIRECTIONS for s in meta["bsr"][d]])
        meta["cka"] = debiased_cka(R0, R1) if n > 3 else float("nan")
        meta["found"] = any(grids[d] for d in DIRECTIONS)
        return Explanation(values=grids, kind="concept", meta=meta)

    def _mean_difference(self, A: Any, grid: np.ndarray) -> float:
        """Mean Δ over the grid's pairs (Δ = −log(A)/β); in kNN mode over the pairs the sparse
        graph holds (a pair near in neither model carries no difference)."""
        block = A[grid][:, grid]
        if hasattr(block, "toarray"):
            values = block.tocoo()
            values = values.data[values.row != values.col]
        else:
            values = block[~np.eye(len(grid), dtype=bool)]
        values = values[values > 0]
        return float(np.mean(-np.log(values) / self.beta)) if len(values) else 0.0

    def _graph(self, direction: str, R0: np.ndarray, R1: np.ndarray, gamma: float, labels: Any):
        """(affinity of the direction, ranks in the close model, ranks in the far model, the
        close model's representation); the ranks are None in kNN mode (computed per grid)."""
        close_is_1 = direction == "1_over_0"
        if self.knn:
            A10, A01 = sparse_difference(
                R0, R1, k=self.knn, gamma=gamma, beta=self.beta, seed=self.seed
            )
            return (A10 if close_is_1 else A01), None, None, (R1 if close_is_1 else R0)
        D0, D1 = distances(R0, self.distance), distances(R1, self.distance)
        if labels is not None:
            D0, D1 = label_guidance(D0, labels), label_guidance(D1, labels)
        A10, A01 = affinities(difference(D0, D1, gamma=gamma, kind=self.diff), self.beta)
        if close_is_1:
            return A10, D1, D0, R1
        return A01, D0, D1, R0

    def _grid_ranks(
        self, direction: str, R0: np.ndarray, R1: np.ndarray, grid: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        r0, r1 = ranks_of_pairs(R0, grid), ranks_of_pairs(R1, grid)
        return (r1, r0) if direction == "1_over_0" else (r0, r1)
