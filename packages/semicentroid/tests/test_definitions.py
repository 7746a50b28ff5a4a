"""The audits against a brute force written from the paper's definitions alone (§2): every
coalition of at least ⌈n/k⌉ agents (not only m-subsets), every centre, and the agents' losses
computed here, not by the package's `losses`."""

import itertools
import math
import time

import numpy as np
import pytest
from paperplug_semicentroid import (
    Clustering,
    SemiCentroidInstance,
    audit_core,
    audit_fjr,
    semi_centroid_core,
)


def _ratio(num: float, den: float) -> float:
    """ℓ_i(X) / ℓ_i(S, y), with 0/0 = 0 (no gain from nothing) and x/0 = ∞."""
    if num == 0:
        return 0.0
    return math.inf if den == 0 else num / den


def _definitions(inst: SemiCentroidInstance, labels: np.ndarray, centers: np.ndarray):
    """(core value, FJR value) by enumeration from the definitions."""
    n, m = inst.n, math.ceil(inst.n / inst.k)
    current = [
        max(inst.Dm[i, j] for j in range(n) if labels[j] == labels[i])
        + inst.Dc[i, centers[labels[i]]]
        for i in range(n)
    ]
    core = fjr = 0.0
    for size in range(m, n + 1):
        for S in itertools.combinations(range(n), size):
            for y in range(inst.n_centers):
                dev = {i: max(inst.Dm[i, j] for j in S) + inst.Dc[i, y] for i in S}
                core = max(core, min(_ratio(current[i], dev[i]) for i in S))
                fjr = max(fjr, _ratio(min(current[i] for i in S), max(dev.values())))
    return core, fjr


def test_both_audits_equal_enumeration_of_every_coalition_and_centre(instances):
    rng = np.random.default_rng(3)
    for inst in instances[::5]:  # 30 instances of the three kinds, n ≤ 10
        for cl in (
            semi_centroid_core(inst),
            Clustering(rng.integers(0, inst.k, inst.n), rng.integers(0, inst.n_centers, inst.k)),
        ):
            core, fjr = _definitions(inst, cl.labels, cl.centers)
            assert audit_core(inst, cl).value == pytest.approx(core, rel=1e-9)
            assert audit_fjr(inst, cl).value == pytest.approx(fjr, rel=1e-9)


@pytest.mark.parametrize("audit", [audit_core, audit_fjr])
def test_an_audit_out_of_time_still_returns_the_quick_lower_bound(audit):
    # issue 37: a dual metric on 200 points, audit_fjr(time_limit=2) returned less than
    # method="lower" alone. The exact search now starts from the semi-ball bound.
    X = np.random.default_rng(0).normal(size=(120, 4))
    inst = SemiCentroidInstance.from_points(
        X, 5, lam=None, metric="euclidean", metric_m="cityblock"
    )
    cl = semi_centroid_core(inst)
    start = time.perf_counter()
    lower = audit(inst, cl, method="lower")
    limit = 4 * (time.perf_counter() - start) + 0.5  # room for the lower pass, not the search
    result = audit(inst, cl, time_limit=limit)
    assert result.value >= lower.value
    assert result.exact or (result.timed_out and not result.exact)
