"""The Solver contract from paperplug.testing, on the adversarial market."""

import pytest
from paperplug_matroid import worst_case_market

from paperplug.testing import SolverContract


class TestContract(SolverContract):
    component = "matroid"
    bad_params = {"mode": ["fractional"], "seed": [-1, 1.5]}
    accepts = {"problem[0]:dtype": "any non-zero biadjacency entry is an edge (as documented)"}

    @pytest.fixture
    def solve_case(self):
        matroid, groups = worst_case_market(6)
        return (matroid.biadjacency.toarray(), groups), {}


def test_solution_certificate_and_objective():
    import paperplug

    bi, groups = worst_case_market(6)
    solution = paperplug.load("solver", "matroid").solve((bi, groups), seed=0)
    assert solution.objective["pof"] == pytest.approx(2 * 7 / 8)
    assert solution.certificate["tight_set"] == [0, 1]
    assert solution.certificate["rank_of_tight_union"] == 1
    assert solution.certificate["sum_of_tight_group_ranks"] == 2
    assert solution.value.marginals == pytest.approx({0: 0.5, 1: 0.5, 2: 3.0})
    integral = paperplug.load("solver", "matroid", mode="integral").solve((bi, groups))
    assert integral.value.counts == {0: 0, 1: 0, 2: 3} and integral.value.rounding_gap == 1.0
