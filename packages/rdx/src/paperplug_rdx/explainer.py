"""RDX as an Explainer: two representations of the same items in, explanation grids of how
they differ out, in both directions, with their binary success rates.

`explain(None, (R0, R1))` takes the representations; `explain((model_0, model_1), inputs,
layer=...)` extracts them from a named layer of two torch modules (or Hugging Face model
names/paths with `layer=int`) first."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug import Explanation
from paperplug_rdx.alignment import align_linear, label_guidance
from paperplug_rdx.clustering import seeded_neighbourhoods, spectral_clusters
from paperplug_rdx.difference_graph import affinities, difference
from paperplug_rdx.distances import check_representation, distances
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
        self.distance, self.diff, self.gamma, self.beta = distance, diff, gamma, beta
        self.n_clusters, self.grid_size, self.seeding = n_clusters, grid_size, seeding
        self.min_difference, self.align, self.knn, self.seed = min_difference, align, knn, seed

    def representations(self, model: Any, inputs: Any, layer: Any) -> tuple[np.ndarray, np.ndarray]:
        if model is None:
            if not isinstance(inputs, (tuple, list)) or len(inputs) != 2:
                raise TypeError("explain(None, (R0, R1)): give the two representations as a pair")
            return inputs[0], inputs[1]
        if not isinstance(model, (tuple, list)) or len(model) != 2:
            raise TypeError("model must be a pair (model_0, model_1), or None with inputs=(R0, R1)")
        if layer is None:
            raise ValueError(
                "layer=... names the layer (torch modules) or hidden-state index (HF models)"
            )
        from paperplug_rdx.features import hf_hidden_states, layer_features

        extract = layer_features if isinstance(layer, str) else hf_hidden_states
        return extract(model[0], inputs, layer), extract(model[1], inputs, layer)

    def explain(
        self, model: Any, inputs: Any, *, target: Any = None, layer: Any = None, labels: Any = None
    ) -> Explanation:
        """Grids per direction; `labels` (optional) guide the distances (cross-label pairs far)."""
        if self.n_clusters < 1 or self.grid_size < 2 or self.beta <= 0:
            raise ValueError("need n_clusters >= 1, grid_size >= 2 and beta > 0")
        raw0, raw1 = self.representations(model, inputs, layer)
        R0 = check_representation(raw0, "R0")
        R1 = check_representation(raw1, "R1", n=len(R0))
        n = len(R0)
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
