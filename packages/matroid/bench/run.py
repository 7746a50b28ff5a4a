"""The closed form beside LP / ILP oracles on the same contested markets, in one process.

- the definition: an LP over lotteries on every enumerated independent set (scipy HiGHS),
  exponential in the number of agents;
- the fractional-matching LP with opportunity-fairness rows (scipy HiGHS), polynomial;
- OR-Tools CP-SAT on the integral allocation with group capacities ⌊y*_c⌋, beside our flow.
Values must be identical; the table gives the speed ratios as the number of agents grows.

make bench PKG=matroid [ARGS="--max-n 3000"]
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
from paperplug_matroid import TransversalMatroid, fair_point, integral_allocation
from paperplug_matroid.embedded import contested_market
from scipy.optimize import linprog
from scipy.sparse import coo_matrix, vstack

from paperplug.harness import best_of, single_thread, table

SIZES = (8, 12, 16, 60, 200, 1000, 3000)
ENUMERATION_LIMIT = 16  # 2^n subsets: beyond this the definition LP does not finish in minutes


def enumeration_lp(bi: np.ndarray, groups: np.ndarray) -> float:
    """max λ over lotteries on all independent sets with E|I ∩ G_c| = λ r(G_c); returns λ."""
    matroid = TransversalMatroid(bi)
    n = bi.shape[0]
    labels = np.unique(groups)
    sets = [
        s for k in range(n + 1) for s in itertools.combinations(range(n), k) if matroid.rank(s) == k
    ]
    r = np.array([matroid.rank(np.flatnonzero(groups == c)) for c in labels], float)
    counts = np.array([[np.sum(groups[list(s)] == c) for s in sets] for c in labels], float)
    A = np.vstack([np.hstack([counts, -r[:, None]]), np.r_[np.ones(len(sets)), 0.0]])
    res = linprog(np.r_[np.zeros(len(sets)), -1.0], A_eq=A, b_eq=np.r_[np.zeros(len(labels)), 1.0],
                  bounds=[(0, None)] * len(sets) + [(0, 1)], method="highs")  # fmt: skip
    return -res.fun


def matching_lp(bi: np.ndarray, groups: np.ndarray) -> float:
    """max λ over fractional matchings x with Σ_{i∈G_c} x_i = λ r(G_c) (the bipartite matching
    polytope is integral, so this is the same polymatroid); r(G_c) by scipy's matching."""
    matroid = TransversalMatroid(bi)
    agents, jobs = np.nonzero(bi)
    E, n, m = len(agents), bi.shape[0], bi.shape[1]
    labels = np.unique(groups)
    r = np.array([matroid.rank(np.flatnonzero(groups == c)) for c in labels], float)
    edge = np.arange(E)
    agent_rows = coo_matrix((np.ones(E), (agents, edge)), shape=(n, E))
    job_rows = coo_matrix((np.ones(E), (jobs, edge)), shape=(m, E))
    A_ub = vstack([agent_rows, job_rows]).tocsr()
    A_ub = vstack([A_ub.T, coo_matrix((1, A_ub.shape[0]))]).T.tocsr()  # λ column: zeros
    group_of_edge = np.searchsorted(labels, groups[agents])
    fair = coo_matrix((np.ones(E), (group_of_edge, edge)), shape=(len(labels), E)).toarray()
    A_eq = np.hstack([fair, -r[:, None]])
    res = linprog(np.r_[np.zeros(E), -1.0], A_ub=A_ub, b_ub=np.ones(n + m), A_eq=A_eq,
                  b_eq=np.zeros(len(labels)), bounds=[(0, 1)] * (E + 1), method="highs")  # fmt: skip
    return -res.fun


def cpsat_integral(bi: np.ndarray, groups: np.ndarray, caps: dict) -> int:
    """Largest matching with at most caps[c] agents of group c (CP-SAT, exact)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    agents, jobs = np.nonzero(bi)
    x = [model.new_bool_var(f"x{e}") for e in range(len(agents))]
    for i in range(bi.shape[0]):
        model.add(sum(x[e] for e in np.flatnonzero(agents == i)) <= 1)
    for j in range(bi.shape[1]):
        model.add(sum(x[e] for e in np.flatnonzero(jobs == j)) <= 1)
    for c, cap in caps.items():
        model.add(sum(x[e] for e in np.flatnonzero(groups[agents] == c)) <= cap)
    model.maximize(sum(x))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(model)
    assert status == cp_model.OPTIMAL
    return int(solver.objective_value)


def measure(n: int, seed: int) -> list:
    """One row: the same market through the closed form and each oracle (best of 3 timings)."""
    bi, raw = contested_market(n, seed)
    groups = np.asarray(raw)
    point, ours = best_of(lambda: fair_point(bi, groups))
    lam = float(point.exact["lambda_star"])
    lam_lp, lp = best_of(lambda: matching_lp(bi, groups))
    lam_enum, enum = math.nan, math.nan
    if n <= ENUMERATION_LIMIT:
        lam_enum, enum = best_of(lambda: enumeration_lp(bi, groups), repeat=1)
    alloc, flow = best_of(lambda: integral_allocation(bi, groups, point))
    best, sat = best_of(lambda: cpsat_integral(bi, groups, alloc.capacities))
    agree = abs(lam - lam_lp) < 1e-6 and (math.isnan(lam_enum) or abs(lam - lam_enum) < 1e-6)
    return [n, point.pof, agree, best == len(alloc.agents), ours * 1e3, lp / ours, enum / ours,
            flow * 1e3, sat / flow]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-n", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    single_thread()
    fair_point(*contested_market(8))  # warm-up: imports and first calls
    rows = []
    for n in (s for s in SIZES if s <= args.max_n):
        rows.append(measure(n, args.seed))
        print(table(rows[-1:], HEADER, digits=3).splitlines()[-1], flush=True)
    print("\n" + table(rows, HEADER, digits=3))


HEADER = ["agents", "PoF", "λ* equal (LPs)", "integral equal (CP-SAT)", "closed form ms",
          "matching LP / ours", "enumeration LP / ours", "our flow ms", "CP-SAT / flow"]  # fmt: skip

if __name__ == "__main__":
    main()
