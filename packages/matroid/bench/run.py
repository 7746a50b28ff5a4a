"""The closed form beside LP / ILP oracles on the same contested markets, in one process.

- the definition: an LP over lotteries on every enumerated independent set (scipy HiGHS),
  exponential in the number of agents;
- the fractional-matching LP with opportunity-fairness rows (scipy HiGHS), polynomial;
- OR-Tools CP-SAT on the integral allocation with group capacities ⌊y*_c⌋, beside our flow.
Values must be identical; the table gives the speed ratios as the number of agents grows.
Section `scale`: every matroid type at 10,000 elements (C = 3 and C = 8 groups): the fair
point, the integral allocation (matroid intersection; max-flow for transversal) and the
lottery (column generation), each checked (Σ⌊y*_c⌋ served, marginals = quotas).

make bench PKG=matroid [ARGS="--sections oracles scale --max-n 3000"]
"""

from __future__ import annotations

import argparse
import itertools
import math

import networkx as nx
import numpy as np
from paperplug_matroid import (
    GraphicMatroid,
    PartitionMatroid,
    RankOracleMatroid,
    TransversalMatroid,
    UniformMatroid,
    fair_lottery,
    fair_point,
    integral_allocation,
)
from paperplug_matroid.embedded import contested_market
from scipy import sparse
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


def scale_instances(n: int, C: int, rng: np.random.Generator) -> list[tuple[str, object, list]]:
    """One contested instance per matroid type on n elements: 80% of the elements (group 0)
    spread over the whole structure, 20% (groups 1..C−1) packed into a small shared part
    (a 2%-of-vertices hub, 2% of the blocks), so the groups collide and PoF > 1. The rank
    oracle (graphic underneath) gets n // 20 elements: it pays a rank call per element per
    span. A graphic matroid with groups drawn at random (PoF ≈ 1) is added: there the capped
    greedy start is further from the optimum and the intersection augments more."""

    def contested_graph(m: int) -> tuple[list, np.ndarray]:
        vertices, shared = m // 2, m // 5
        hub = max(3, vertices // 50)
        wide = rng.integers(0, vertices, size=(m - shared, 2))
        packed = rng.integers(0, hub, size=(shared, 2))
        groups = np.r_[np.zeros(m - shared, int), rng.integers(1, C, shared)]
        return [tuple(e) for e in np.vstack([wide, packed]).tolist()], groups

    edges, graph_groups = contested_graph(n)
    blocks, shared = n // 10, n // 5
    block_of = np.r_[rng.integers(0, blocks, n - shared), rng.integers(0, blocks // 50, shared)]
    partition_groups = np.r_[np.zeros(n - shared, int), rng.integers(1, C, shared)]
    uniform_groups = rng.choice(C, size=n, p=np.arange(C, 0, -1) / (C * (C + 1) / 2))
    bi, letters = contested_market(n)
    market_groups = [0 if g == "A" else int(rng.integers(1, C)) for g in letters]
    small_edges, small_groups = contested_graph(n // 20)
    small = GraphicMatroid(small_edges)
    oracle = RankOracleMatroid(small.n, small.rank, check_up_to=0)
    return [
        (f"graphic ({n // 2} vertices)", GraphicMatroid(edges), graph_groups),
        (f"graphic G({n // 2}, {n}), random groups",
         GraphicMatroid(nx.gnm_random_graph(n // 2, n, seed=0)), rng.integers(0, C, n)),
        (f"partition ({blocks} blocks)", PartitionMatroid(block_of, rng.integers(1, 6, blocks)),
         partition_groups),
        (f"uniform (k = {2 * n // 5})", UniformMatroid(n, 2 * n // 5), uniform_groups),
        ("transversal (contested)", TransversalMatroid(sparse.csr_matrix(bi)), market_groups),
        (f"rank oracle (graphic, {small.n})", oracle, small_groups),
    ]  # fmt: skip


def measure_scale(name: str, matroid, groups, C: int) -> list:
    """Times of the three stages on one instance, each checked."""
    point, t_point = best_of(lambda: fair_point(matroid, groups), repeat=1)
    alloc, t_alloc = best_of(lambda: integral_allocation(matroid, groups, point), repeat=1)
    lottery, t_lottery = best_of(lambda: fair_lottery(matroid, groups, point), repeat=1)
    floors = sum(math.floor(point.exact["lambda_star"] * r) for r in point.group_ranks.values())
    exact = all(abs(lottery.marginals[c] - q) < 1e-7 for c, q in point.quotas.items())
    return [name, matroid.n, C, point.pof, len(alloc.agents) == floors, exact,
            t_point, t_alloc, t_lottery, t_point + t_alloc + t_lottery]  # fmt: skip


SCALE_HEADER = ["matroid", "elements", "C", "PoF", "Σ⌊y*⌋ served", "lottery exact",
                "fair point s", "integral s", "lottery s", "total s"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-n", type=int, default=3000)
    parser.add_argument("--scale-n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sections", nargs="+", choices=("oracles", "scale"),
                        default=["oracles", "scale"])  # fmt: skip
    args = parser.parse_args()
    single_thread()
    fair_point(*contested_market(8))  # warm-up: imports and first calls
    if "oracles" in args.sections:
        rows = []
        for n in (s for s in SIZES if s <= args.max_n):
            rows.append(measure(n, args.seed))
            print(table(rows[-1:], HEADER, digits=3).splitlines()[-1], flush=True)
        print("\n" + table(rows, HEADER, digits=3) + "\n")
    if "scale" in args.sections:
        rng = np.random.default_rng(args.seed)
        rows = []
        for C in (3, 8):
            for name, matroid, groups in scale_instances(args.scale_n, C, rng):
                rows.append(measure_scale(name, matroid, groups, C))
                print(table(rows[-1:], SCALE_HEADER, digits=3).splitlines()[-1], flush=True)
        print("\n" + table(rows, SCALE_HEADER, digits=3))


HEADER = ["agents", "PoF", "λ* equal (LPs)", "integral equal (CP-SAT)", "closed form ms",
          "matching LP / ours", "enumeration LP / ours", "our flow ms", "CP-SAT / flow"]  # fmt: skip

if __name__ == "__main__":
    main()
