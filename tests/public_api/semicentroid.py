"""The semicentroid package's public API: one valid call of each callable, for the battery (an
instance of 8 planar points at k = 2 in the λ form, its Phase-1 clustering)."""

from __future__ import annotations

import numpy as np
import paperplug_semicentroid as s
from scipy.spatial.distance import cdist

from paperplug.testing import Sweep

REASONS = {
    "Audit": "a result type (what audit_core and audit_fjr return)",
    "Clustering": "a result type (what the algorithms return; check_clustering builds a checked one)",
    "Cohesive": "a result type (what the MCC subroutines return)",
    "Violation": "a result type (what triangle_violation and center_violation return)",
    "NonMetricWarning": "a warning category, raised by the package, not called by users",
    "SemiCentroidFair": (
        "the Solver role's contract sweeps it (packages/semicentroid/tests/test_contract.py)"
    ),
}
X = np.random.default_rng(0).normal(size=(8, 2))
D = cdist(X, X)
INSTANCE = {"k": [0, 9], "lam": [-0.1, 1.5]}


def sweeps() -> dict[str, Sweep]:
    inst = s.SemiCentroidInstance.from_points(X, 2, lam=0.5)
    phase1 = s.cohesive_peeling(inst)
    L = s.losses(inst, phase1)
    agents, mcc = np.arange(6), {"m": [0, 7]}
    return {
        "SemiCentroidInstance": Sweep(
            s.SemiCentroidInstance,
            (0.5 * D, 0.5 * D, 2),
            {"lam": 0.5},
            bad_params={**INSTANCE, "Dm": [-D, D[:, :5]], "Dc": [-D, D[:5]]},
            reasons={"names": "how errors name Dm and Dc: any two strings"},
            width=False,  # Dc: any number of candidate centres
        ),
        "SemiCentroidInstance.from_distances": Sweep(
            s.SemiCentroidInstance.from_distances,
            (D, 2),
            {"lam": 0.5, "Dc": D},
            bad_params={**INSTANCE, "D": [-D], "Dc": [D[:5]]},
            width=False,
        ),
        "SemiCentroidInstance.from_points": Sweep(
            s.SemiCentroidInstance.from_points,
            (X, 2),
            {"lam": 0.5, "metric": "euclidean", "centers": X[:4]},
            bad_params={**INSTANCE, "metric": ["cosinus", 3], "metric_m": ["cosinus", 3]},
            width=False,  # points of any dimension (centers too: a mismatch is rejected)
        ),
        "best_center": Sweep(s.best_center, (inst, agents), bad_params={"members": [[8], [-1]]}),
        "check_clustering": Sweep(
            s.check_clustering,
            (inst, phase1.labels, phase1.centers),
            bad_params={"labels": [[0] * 7, [0] * 7 + [5]], "centers": [[0, 8]]},
        ),
        "coalition_losses": Sweep(
            s.coalition_losses, (inst, agents, 0), bad_params={"members": [[8]], "y": [-1, 8]}
        ),
        "losses": Sweep(s.losses, (inst, phase1)),
        "exact_mcc": Sweep(
            s.exact_mcc,
            (inst, agents, 4),
            bad_params={**mcc, "agents": [[8], [0, 0]], "deadline": ["soon"]},
        ),
        "most_cohesive_cluster": Sweep(
            s.most_cohesive_cluster,
            (inst, agents, 4),
            bad_params={**mcc, "agents": [[8]], "method": ["ball"]},
        ),
        "semiball_mcc": Sweep(
            s.semiball_mcc, (inst, agents, 4), bad_params={**mcc, "agents": [[8]]}
        ),
        "mcc_lower_bound": Sweep(
            s.mcc_lower_bound, (inst, agents, 4), bad_params={**mcc, "agents": [[8]]}
        ),
        "find_clique": Sweep(
            s.find_clique,
            (D < 1.0, 3),
            bad_params={"adj": [(D < 1.0)[:, :5]], "size": [-1], "deadline": ["soon"]},
        ),
        "cohesive_peeling": Sweep(s.cohesive_peeling, (inst,), bad_params={"mcc": ["ball"]}),
        "core_bound": Sweep(s.core_bound, (1.0,), bad_params={"alpha": [0.5]}),
        "switching_constant": Sweep(s.switching_constant, (2.0,), bad_params={"alpha": [0.5]}),
        "selective_switching": Sweep(
            s.selective_switching,
            (inst, phase1, 2.0),
            bad_params={"c": [0.5, -1.0]},
        ),
        "semi_centroid_core": Sweep(s.semi_centroid_core, (inst,), bad_params={"mcc": ["ball"]}),
        "audit_core": Sweep(
            s.audit_core,
            (inst, L),
            {"time_limit": 5.0},
            bad_params={"clustering": [L[:5], -L], "method": ["full"], "time_limit": [-1.0]},
        ),
        "audit_fjr": Sweep(
            s.audit_fjr,
            (inst, phase1),
            {"time_limit": 5.0},
            bad_params={"method": ["full"], "time_limit": [-1.0]},
        ),
        "centroid_greedy_capture": Sweep(s.centroid_greedy_capture, (inst,)),
        "non_centroid_greedy_capture": Sweep(s.non_centroid_greedy_capture, (inst,)),
        "triangle_violation": Sweep(
            s.triangle_violation, (D,), bad_params={"D": [D[:5]], "seed": [-1]}
        ),
        "center_violation": Sweep(s.center_violation, (D,), bad_params={"seed": [-1]}, width=False),
        "kmeans_pp": Sweep(
            s.kmeans_pp, (X, 2), bad_params={"k": [0, 9], "seed": [-1]}, width=False
        ),
        "SemiCentroidInstance.check_agents": Sweep(
            inst.check_agents,
            (np.array([0, 2]), "value"),  # errors name what `name` says
            bad_params={"value": [[-1], [inst.n], [0, 0]], "name": [""]},
        ),
        "SemiCentroidInstance.check_center": Sweep(
            inst.check_center,
            (1, "value"),
            bad_params={"value": [-1, inst.n_centers], "name": [""]},
        ),
    }
