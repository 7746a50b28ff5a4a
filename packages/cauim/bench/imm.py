"""IMM (Tang, Shi, Xiao, SIGMOD 2015) for the independent cascade, written for the benchmark
from the paper's Algorithms 1–3, as the peer on plain spread: reverse-reachable (RR) sets from
uniform roots, the sampling phase that doubles its guess x = n/2^i of OPT until the greedy's
coverage certifies a lower bound LB, then θ = λ*/LB RR sets and greedy max coverage. The final
selection draws θ fresh RR sets (Chen 2018's correction to the martingale argument). Its
guarantee: a (1 − 1/e − ε)-approximation of the best spread with probability ≥ 1 − 1/n^ℓ.

Independent of the package's own samplers (its coins are plain draws: each arc is examined
at most once per RR set)."""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse


class RRSets:
    """RR sets of `network` (arrays source, target, prob, n), drawn in batches from `rng`."""

    def __init__(self, network, rng: np.random.Generator, batch: int = 2000) -> None:
        self.net, self.rng, self.batch = network, rng, batch
        order = np.argsort(network.target, kind="stable")
        self.in_arc = order
        self.in_ptr = np.concatenate(
            [[0], np.cumsum(np.bincount(network.target, minlength=network.n))]
        )
        self.members: list[np.ndarray] = []  # per batch: (set id, node) pairs
        self.count = 0

    def extend_to(self, total: int) -> None:
        while self.count < total:
            self._draw(min(self.batch, total - self.count))

    def _draw(self, size: int) -> None:
        net, n = self.net, self.net.n
        visited = np.zeros((size, n), dtype=bool)
        sets = np.arange(size)
        nodes = self.rng.integers(n, size=size)
        visited[sets, nodes] = True
        found_sets, found_nodes = [sets], [nodes]
        while len(nodes):
            counts = self.in_ptr[nodes + 1] - self.in_ptr[nodes]
            starts = np.repeat(self.in_ptr[nodes] - np.cumsum(counts) + counts, counts)
            arcs = self.in_arc[starts + np.arange(counts.sum())]
            owner = np.repeat(sets, counts)
            live = self.rng.random(len(arcs)) < net.prob[arcs]
            owner, tail = owner[live], net.source[arcs[live]]
            fresh = ~visited[owner, tail]
            owner, tail = owner[fresh], tail[fresh]
            key = np.unique(owner * n + tail)
            sets, nodes = key // n, key % n
            visited[sets, nodes] = True
            found_sets.append(sets)
            found_nodes.append(nodes)
        pairs = np.stack([np.concatenate(found_sets) + self.count, np.concatenate(found_nodes)])
        self.members.append(pairs)
        self.count += size

    def node_selection(self, k: int) -> tuple[list[int], float]:
        """Greedy max coverage (Algorithm 1): k nodes and the share of RR sets they cover."""
        pairs = np.concatenate(self.members, axis=1)
        n, total = self.net.n, self.count
        incidence = sparse.csr_matrix(
            (np.ones(pairs.shape[1], dtype=np.int32), (pairs[1], pairs[0])), shape=(n, total)
        )
        by_set = incidence.T.tocsr()
        degree = np.asarray(incidence.sum(1)).ravel().astype(np.int64)
        covered = np.zeros(total, dtype=bool)
        seeds = []
        for _ in range(k):
            v = int(np.argmax(degree))
            seeds.append(v)
            hit = incidence.indices[incidence.indptr[v] : incidence.indptr[v + 1]]
            hit = hit[~covered[hit]]
            covered[hit] = True
            members = by_set[hit]
            degree -= np.bincount(members.indices, minlength=n)
        return seeds, covered.mean()


def imm(network, k: int, epsilon: float = 0.5, ell: float = 1.0, seed: int = 0) -> list[int]:
    """k seeds by IMM with accuracy ε and failure probability 1/n^ℓ."""
    rng = np.random.default_rng(seed)
    n = network.n
    ell = ell * (1 + math.log(2) / math.log(n))
    log_binom = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    eps_prime = math.sqrt(2) * epsilon
    lam_prime = (
        (2 + 2 / 3 * eps_prime)
        * (log_binom + ell * math.log(n) + math.log(math.log2(n)))
        * n
        / eps_prime**2
    )
    rr, lower = RRSets(network, rng), 1.0
    for i in range(1, int(math.log2(n))):
        x = n / 2**i
        rr.extend_to(math.ceil(lam_prime / x))
        _, coverage = rr.node_selection(k)
        if n * coverage >= (1 + eps_prime) * x:
            lower = n * coverage / (1 + eps_prime)
            break
    alpha = math.sqrt(ell * math.log(n) + math.log(2))
    beta = math.sqrt((1 - 1 / math.e) * (log_binom + ell * math.log(n) + math.log(2)))
    lam_star = 2 * n * ((1 - 1 / math.e) * alpha + beta) ** 2 / epsilon**2
    fresh = RRSets(network, rng)
    fresh.extend_to(math.ceil(lam_star / lower))
    return fresh.node_selection(k)[0]
