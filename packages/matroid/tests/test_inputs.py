"""Bad inputs are refused at the door with a message naming the argument; inputs untouched."""

import numpy as np
import pytest
from paperplug_matroid import (
    OpportunityFairAllocation,
    TransversalMatroid,
    fair_point,
    worst_case_market,
)


def test_bad_inputs():
    bi = np.eye(3)
    with pytest.raises(ValueError, match="groups has 2 labels for 3"):
        fair_point(bi, [0, 1])
    with pytest.raises(ValueError, match="missing label"):
        fair_point(bi, [0, None, 1])
    with pytest.raises(ValueError, match="missing label"):
        fair_point(bi, [0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="2-D"):
        TransversalMatroid(np.ones(3))
    with pytest.raises(TypeError, match="numbers"):
        TransversalMatroid(np.array([["a", "b"]]))
    with pytest.raises(TypeError, match="bipartite graph"):
        fair_point("a graph", [0])
    with pytest.raises(ValueError, match="M must be"):
        worst_case_market(-1)
    with pytest.raises(ValueError, match="mode"):
        OpportunityFairAllocation(mode="best").solve((bi, [0, 1, 2]))
    with pytest.raises(TypeError, match="problem must be"):
        OpportunityFairAllocation().solve(bi)
    with pytest.raises(ValueError, match="groups"):
        OpportunityFairAllocation().solve({"graph": bi})


def test_inputs_are_not_mutated():
    bi = (np.random.default_rng(0).random((10, 6)) < 0.3).astype(int)
    groups = np.arange(10) % 3
    before = bi.copy(), groups.copy()
    OpportunityFairAllocation().solve((bi, groups), seed=1)
    assert np.array_equal(bi, before[0]) and np.array_equal(groups, before[1])
