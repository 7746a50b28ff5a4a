"""Discrete sequence chunking (DSC, paper §3.1): for networks with few neurons, bin each
neuron's activity into a handful of levels (1-D k-means), read the population state at each
step as a string of bin ids, merge frequent adjacent states into chunks (BPE-like), and decode
the input symbol from the state with a lookup table (the "reflection")."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.cluster import KMeans

from paperplug.checks import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    check_scalar,
    check_sequence,
)


def neuron_bins(H: Any, n_bins: int = 5, seed: int = 0) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per-neuron 1-D k-means with `n_bins` levels (fewer when a neuron takes fewer distinct
    values). Returns the bin ids (tokens, neurons), bins ordered by their centre, and each
    neuron's sorted centres."""
    H = check_array(H, "H", ndim=2)
    n_bins = check_scalar(n_bins, "n_bins", "int", low=1)
    check_scalar(seed, "seed", "int", low=0)
    ids = np.empty(H.shape, dtype=np.int64)
    centres = []
    for j in range(H.shape[1]):
        column = H[:, j : j + 1]
        k = min(n_bins, len(np.unique(column)))
        km = KMeans(n_clusters=k, n_init=3, random_state=seed).fit(column)
        order = np.argsort(km.cluster_centers_[:, 0])
        rank = np.empty(k, dtype=np.int64)
        rank[order] = np.arange(k)
        ids[:, j] = rank[km.labels_]
        centres.append(km.cluster_centers_[order, 0])
    return ids, centres


def assign_bins(H: Any, centres: Sequence[np.ndarray]) -> np.ndarray:
    """Bin ids of new activations: each neuron's nearest centre."""
    H = check_array(H, "H", ndim=2)
    centres = [
        check_array(c, f"centres[{j}]", ndim=1)
        for j, c in enumerate(check_sequence(centres, "centres"))
    ]
    if H.shape[1] != len(centres):
        raise ValueError(f"H has {H.shape[1]} neurons, centres {len(centres)}")
    return np.stack([np.abs(H[:, j, None] - c[None]).argmin(1) for j, c in enumerate(centres)], 1)


def state_ids(bins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The state string at each step as an integer id (ids in order of first appearance) and
    the table of distinct bin vectors, one row per id."""
    bins = check_array(bins, "bins", dtype="int", ndim=2)
    _, first, inverse = np.unique(bins, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)  # unique-row index -> rank by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.ravel()], bins[np.sort(first)]


@dataclass
class Chunking:
    """The BPE-like parse: `spans[i] = (start, end)` of the i-th chunk occurrence (end
    exclusive), `chunks[i]` its state tuple, and `dictionary` chunk -> count."""

    spans: list[tuple[int, int]]
    chunks: list[tuple[int, ...]]
    dictionary: dict[tuple[int, ...], int]


def merge_chunks(
    states: Sequence[int], n_iter: int = 6, top_k: int = 5, min_freq: int = 10
) -> Chunking:
    """BPE-like merging of the state sequence: each iteration counts adjacent chunk pairs in
    the current parse, takes the `top_k` most frequent pairs seen at least `min_freq` times
    and merges them in one left-to-right pass; a pair whose left chunk was just consumed by
    the previous merge is skipped, so merges never overlap (paper: top-5 pairs, frequency
    >= 10, 6 iterations)."""
    states = check_array(states, "states", dtype="int", ndim=1)
    n_iter = check_scalar(n_iter, "n_iter", "int", low=0)
    top_k = check_scalar(top_k, "top_k", "int", low=1)
    min_freq = check_scalar(min_freq, "min_freq", "int", low=1)
    chunks = [(int(s),) for s in states]
    spans = [(t, t + 1) for t in range(len(states))]
    for _ in range(n_iter):
        counts = Counter(itertools.pairwise(chunks))
        chosen = {p for p, c in counts.most_common(top_k) if c >= min_freq}
        if not chosen:
            break
        new_chunks, new_spans, i = [], [], 0
        while i < len(chunks):
            if i + 1 < len(chunks) and (chunks[i], chunks[i + 1]) in chosen:
                new_chunks.append(chunks[i] + chunks[i + 1])
                new_spans.append((spans[i][0], spans[i + 1][1]))
                i += 2
            else:
                new_chunks.append(chunks[i])
                new_spans.append(spans[i])
                i += 1
        chunks, spans = new_chunks, new_spans
    return Chunking(spans, chunks, dict(Counter(chunks).most_common()))


def lookup_table(states: Sequence[int], symbols: Sequence[Any]) -> dict[int, Any]:
    """State -> the input symbol seen most often with it (ties: the first seen)."""
    states = check_array(states, "states", dtype="int", ndim=1)
    symbols = check_sequence(symbols, "symbols")
    check_consistent_length(states=states, symbols=symbols)
    table: dict[int, Counter] = {}
    for s, y in zip(states.tolist(), symbols, strict=True):
        table.setdefault(s, Counter())[y] += 1
    return {s: c.most_common(1)[0][0] for s, c in table.items()}


class DiscreteSequenceChunker:
    """DSC end to end: bins, states, chunk dictionary and the state-to-symbol decoder.

    `max_neurons` guards the combinatorial blow-up of state strings for wide layers (reduce
    them first, e.g. PCA)."""

    def __init__(
        self,
        n_bins: int = 5,
        n_iter: int = 6,
        top_k: int = 5,
        min_freq: int = 10,
        max_neurons: int = 64,
        seed: int = 0,
    ) -> None:
        self.n_bins, self.n_iter, self.top_k, self.min_freq = n_bins, n_iter, top_k, min_freq
        self.max_neurons, self.seed = max_neurons, seed
        self._check_params()

    def _check_params(self) -> None:
        check_scalar(self.n_bins, "n_bins", "int", low=1)
        check_scalar(self.n_iter, "n_iter", "int", low=0)
        check_scalar(self.top_k, "top_k", "int", low=1)
        check_scalar(self.min_freq, "min_freq", "int", low=1)
        check_scalar(self.max_neurons, "max_neurons", "int", low=1)
        check_scalar(self.seed, "seed", "int", low=0)

    def fit(self, H: Any, symbols: Sequence[Any] | None = None) -> DiscreteSequenceChunker:
        H = check_array(H, "H", ndim=2)
        self._check_params()
        if H.shape[1] > self.max_neurons:
            raise ValueError(
                f"activations have {H.shape[1]} neurons > max_neurons={self.max_neurons}: "
                "DSC state strings blow up; reduce the neurons first (e.g. PCA)"
            )
        bins, self.centres_ = neuron_bins(H, self.n_bins, self.seed)
        self.states_, self.state_bins_ = state_ids(bins)
        self.chunking_ = merge_chunks(self.states_, self.n_iter, self.top_k, self.min_freq)
        self.lookup_ = lookup_table(self.states_, symbols) if symbols is not None else None
        return self

    def transform(self, H: Any) -> np.ndarray:
        """State ids of new activations; a state never seen in fit maps to the nearest seen
        one (Hamming distance between bin vectors)."""
        bins = assign_bins(H, self.centres_)
        dist = (bins[:, None, :] != self.state_bins_[None]).sum(-1)
        return dist.argmin(1)

    def decode(self, H: Any) -> list[Any]:
        """The lookup decoder: the input symbol each step's state stands for."""
        if self.lookup_ is None:
            raise ValueError("decode needs symbols at fit time")
        return [self.lookup_.get(int(s)) for s in self.transform(H)]

    def centre_state(self, state: int) -> np.ndarray:
        """The activity vector of a discrete state (each neuron at its bin centre), used to
        graft the state into the network."""
        check_is_fitted(self, "state_bins_")
        check_scalar(state, "state", "int", low=0, high=len(self.state_bins_) - 1)
        row = self.state_bins_[state]
        return np.array([c[b] for c, b in zip(self.centres_, row, strict=True)])


def covered_fraction(chunking: Chunking, starts: Sequence[int], length: int) -> float:
    """Fraction of planted occurrences [s, s + length) that lie inside one chunk occurrence
    of the parse (the chunk then contains the whole planted pattern)."""
    starts = check_array(starts, "starts", dtype="int", ndim=1)
    begin = np.array([a for a, _ in chunking.spans])
    end = np.array([b for _, b in chunking.spans])
    owner = np.searchsorted(begin, starts, side="right") - 1
    return float(np.mean(end[owner] >= starts + length))
