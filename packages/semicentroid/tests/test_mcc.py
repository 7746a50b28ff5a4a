"""Most Cohesive Cluster: exact equals enumeration; the semi-ball is within its factor 2;
the clique kernel equals brute force."""

import itertools

import numpy as np
from paperplug_semicentroid import coalition_losses, exact_mcc, find_clique, semiball_mcc
from paperplug_semicentroid.mcc import SEMIBALL_FACTOR


def _brute_mcc(inst, R, m):
    return min(
        coalition_losses(inst, np.array(S), y).max()
        for S in itertools.combinations(R, m)
        for y in range(inst.n_centers)
    )


def test_exact_mcc_is_optimal_and_semiball_within_factor(instances):
    rng = np.random.default_rng(3)
    ratios = []
    for inst in instances:
        R = np.sort(rng.choice(inst.n, size=int(rng.integers(inst.m, inst.n + 1)), replace=False))
        opt = _brute_mcc(inst, R, inst.m)
        exact, semi = exact_mcc(inst, R), semiball_mcc(inst, R)
        assert np.isclose(exact.radius, opt) and len(exact.members) == inst.m
        assert set(exact.members) <= set(R) and set(semi.members) <= set(R)
        assert np.isclose(coalition_losses(inst, exact.members, exact.center).max(), opt)
        assert semi.radius <= SEMIBALL_FACTOR * opt + 1e-12
        ratios.append(semi.radius / opt if opt > 0 else 1.0)
    assert max(ratios) > 1.0  # the semi-ball is not secretly exact on these instances


def test_find_clique_equals_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 11))
        adj = rng.random((n, n)) < rng.uniform(0.2, 0.9)
        adj = adj & adj.T
        np.fill_diagonal(adj, rng.random(n) < 0.9)
        size = int(rng.integers(1, 6))
        usable = [v for v in range(n) if adj[v, v]]
        exists = any(
            all(adj[a, b] for a, b in itertools.combinations(S, 2))
            for S in itertools.combinations(usable, size)
        )
        found = find_clique(adj, size)
        assert (found is not None) == exists
        if found is not None:
            assert len(found) == size and all(adj[v, v] for v in found)
            assert all(adj[a, b] for a, b in itertools.combinations(found, 2))
