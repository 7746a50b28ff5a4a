"""The proven guarantees hold on random small instances, audited exactly (brute force)."""

import math

import numpy as np
import pytest
from paperplug_semicentroid import (
    SemiCentroidInstance,
    audit_core,
    audit_fjr,
    centroid_greedy_capture,
    cohesive_peeling,
    core_bound,
    losses,
    non_centroid_greedy_capture,
    selective_switching,
    semi_centroid_core,
    switching_constant,
)

TOL = 1e-9


def test_constants_match_the_paper():
    assert switching_constant(1) == pytest.approx(1.5)
    assert core_bound(1) == pytest.approx(3.0)
    assert core_bound(4) == pytest.approx(3 + 2 * math.sqrt(3))
    assert core_bound(2) == pytest.approx(2 + math.sqrt(5))
    with pytest.raises(ValueError, match="alpha"):
        switching_constant(0.5)


@pytest.mark.parametrize("mcc,bound", [("exact", 3.0), ("semiball", 2 + math.sqrt(5))])
def test_algorithm3_core_bound(instances, mcc, bound):
    assert bound <= 3 + 2 * math.sqrt(3)
    worst = 0.0
    for inst in instances:
        cl = semi_centroid_core(inst, mcc)
        assert len(cl.centers) <= inst.k and set(np.unique(cl.labels)) == set(
            range(len(cl.centers))
        )
        worst = max(worst, audit_core(inst, cl, method="brute").value)
    assert worst <= bound + TOL


@pytest.mark.parametrize("mcc,bound", [("exact", 1.0), ("semiball", 2.0)])
def test_phase1_fjr_bound(instances, mcc, bound):
    for inst in instances:
        assert audit_fjr(inst, cohesive_peeling(inst, mcc), method="brute").value <= bound + TOL


def test_switching_keeps_its_promises(instances):
    # Each agent's final loss is within the bound u it chose by; staying members keep ≤ c·r_t.
    for inst in instances:
        phase1 = cohesive_peeling(inst, "semiball")
        c = switching_constant(2.0)
        out, bound = selective_switching(inst, phase1, c)
        final = losses(inst, out)
        assert np.all(final <= bound + TOL)
        stayed = (phase1.centers[phase1.labels] == out.centers[out.labels]) & (
            phase1.radii[phase1.labels] == out.radii[out.labels]
        )
        assert np.all(final[stayed] <= c * out.radii[out.labels][stayed] + TOL)


def test_greedy_capture_bounds(instances):
    for inst in instances:
        D = inst.Dm / inst.lam if inst.lam else None
        if D is None:
            continue
        centroid = SemiCentroidInstance.from_distances(D, inst.k, lam=0.0)
        gc = centroid_greedy_capture(centroid)
        assert len(gc.centers) <= inst.k
        assert audit_core(centroid, gc, method="brute").value <= 1 + math.sqrt(2) + TOL
        noncentroid = SemiCentroidInstance.from_distances(D, inst.k, lam=1.0)
        ngc = non_centroid_greedy_capture(noncentroid)
        assert len(ngc.centers) <= inst.k
        assert audit_core(noncentroid, ngc, method="brute").value <= 2 + TOL
