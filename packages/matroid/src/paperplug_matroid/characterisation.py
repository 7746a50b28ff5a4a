"""The opportunity-fair point and the price of fairness (paper §3, the polymatroid
characterisation).

The group counts an allocation can reach form the polymatroid of f(S) = r(G_S), the rank of
the union of the groups in S. Opportunity fairness asks y_c = λ·r(G_c) for every group c;
such a y is feasible iff λ·Σ_{c∈S} r(G_c) ≤ r(G_S) for every S, so the largest fair share is

    λ* = min over non-empty S (with Σ_{c∈S} r(G_c) > 0) of r(G_S) / Σ_{c∈S} r(G_c),

the fair quotas are y*_c = λ*·r(G_c), and PoF = r(N) / (λ*·Σ_c r(G_c)). The argmin S is the
tight set: the groups whose opportunities collide. 2^C − 1 rank evaluations.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from paperplug.checks import check_scalar, check_type
from paperplug_matroid.matroids import Matroid, matroid_argument


@dataclass
class Groups:
    """Agents of a matroid split into C groups: `labels[c]` names group c, `members[c]` its
    elements (sorted), `of[i]` the group index of element i."""

    labels: list[Hashable]
    members: list[list[int]]
    of: np.ndarray

    @property
    def C(self) -> int:
        return len(self.labels)


def as_groups(groups: Any, matroid: Matroid) -> Groups:
    """Group labels per element (array-like aligned with the ground set), or a mapping
    {element label: group}. Labels are ordered by np.unique (sorted), never by hashing."""
    check_type(matroid, "matroid", Matroid)
    if isinstance(groups, dict):
        missing = [lab for lab in matroid.labels if lab not in groups]
        if missing:
            raise ValueError(f"groups has no entry for {len(missing)} elements, e.g. {missing[:3]}")
        values = [groups[lab] for lab in matroid.labels]
    else:
        if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
            raise TypeError(
                f"groups must be an array of labels or a dict, got {type(groups).__name__}"
            )
        values = list(groups.tolist() if hasattr(groups, "tolist") else groups)
        if len(values) != matroid.n:
            raise ValueError(f"groups has {len(values)} labels for {matroid.n} elements")
    if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in values):
        raise ValueError("groups holds a missing label (None or NaN)")
    try:
        labels, of = np.unique(np.asarray(values), return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"groups must hold comparable (sortable) labels: {exc}") from exc
    members = [np.flatnonzero(of == c).tolist() for c in range(len(labels))]
    return Groups(labels=labels.tolist(), members=members, of=of.reshape(-1))


@dataclass
class FairPoint:
    """The opportunity-fair point of a matroid allocation problem."""

    pof: float  # r(N) / fair size, ≥ 1
    lambda_star: float  # the fair share of each group's isolated optimum
    tight_set: list[Hashable]  # groups of the argmin S
    quotas: dict[Hashable, float]  # y*_c = λ*·r(G_c): expected agents served per group
    group_ranks: dict[Hashable, int]  # r(G_c): what group c reaches alone
    max_size: int  # r(N)
    fair_size: float  # Σ_c y*_c
    union_ranks: dict[tuple[Hashable, ...], int] = field(repr=False, default_factory=dict)
    exact: dict[str, Fraction] = field(repr=False, default_factory=dict)  # λ*, PoF as fractions

    def to_dict(self) -> dict[str, Any]:
        return {
            "pof": self.pof,
            "lambda_star": self.lambda_star,
            "tight_set": list(self.tight_set),
            "quotas": {str(k): v for k, v in self.quotas.items()},
            "group_ranks": {str(k): v for k, v in self.group_ranks.items()},
            "max_size": self.max_size,
            "fair_size": self.fair_size,
        }


def union_ranks(matroid: Matroid, groups: Groups) -> dict[tuple[int, ...], int]:
    """f(S) = r(G_S) for every non-empty set S of group indices (2^C − 1 rank calls)."""
    check_type(matroid, "matroid", Matroid)
    check_type(groups, "groups", Groups, what="a Groups (see as_groups)")
    if len(groups.of) != matroid.n:
        raise ValueError(f"groups covers {len(groups.of)} elements, the matroid has {matroid.n}")
    out: dict[tuple[int, ...], int] = {}
    for size in range(1, groups.C + 1):
        for subset in itertools.combinations(range(groups.C), size):
            out[subset] = matroid.rank([e for c in subset for e in groups.members[c]])
    return out


def problem_arguments(
    matroid: Any, groups: Any, max_groups: int | None = None
) -> tuple[Matroid, Groups]:
    """The matroid and its groups from what the caller passed, checked; at most `max_groups`
    groups where given (the characterisation costs 2^C rank calls)."""
    check_scalar(max_groups, "max_groups", "int", low=1, allow_none=True)
    matroid = matroid_argument(matroid, "matroid")
    groups = groups if isinstance(groups, Groups) else as_groups(groups, matroid)
    if len(groups.of) != matroid.n:
        raise ValueError(f"groups covers {len(groups.of)} elements, the matroid has {matroid.n}")
    if groups.C == 0:
        raise ValueError("matroid has no agents, so groups has no group")
    if max_groups is not None and max_groups < groups.C:
        raise ValueError(
            f"{groups.C} groups: the characterisation costs 2^C rank calls (max_groups={max_groups})"
        )
    return matroid, groups


def point_argument(point: Any, groups: Groups) -> FairPoint | None:
    """`point` when None or the fair point of these groups, else an error naming it."""
    if point is not None:
        check_type(point, "point", FairPoint, what="a FairPoint (see fair_point) or None")
        if list(point.quotas) != groups.labels:
            raise ValueError(
                f"point is the fair point of groups {list(point.quotas)}, not of {groups.labels}"
            )
    return point


def fair_point(matroid: Any, groups: Any, *, max_groups: int = 20) -> FairPoint:
    """λ*, the tight set, the fair quotas and the price of opportunity fairness (exact, in
    rational arithmetic; exponential in the number of groups C only)."""
    matroid, groups = problem_arguments(matroid, groups, max_groups)
    f = union_ranks(matroid, groups)
    r = [f[(c,)] for c in range(groups.C)]
    total = matroid.rank(range(matroid.n))
    best: tuple[Fraction, tuple[int, ...]] | None = None
    for subset, rank_union in f.items():
        denominator = sum(r[c] for c in subset)
        if denominator == 0:
            continue  # groups that can get nothing alone constrain nothing
        ratio = Fraction(rank_union, denominator)
        if best is None or ratio < best[0] or (ratio == best[0] and len(subset) < len(best[1])):
            best = (ratio, subset)
    if best is None:  # no group can be served at all
        lam, tight = Fraction(1), ()
    else:
        lam, tight = min(best[0], Fraction(1)), best[1]
    fair = lam * sum(r)
    pof = Fraction(total) / fair if fair > 0 else Fraction(1)
    labels = groups.labels
    return FairPoint(
        pof=float(pof),
        lambda_star=float(lam),
        tight_set=[labels[c] for c in tight],
        quotas={labels[c]: float(lam * r[c]) for c in range(groups.C)},
        group_ranks={labels[c]: r[c] for c in range(groups.C)},
        max_size=total,
        fair_size=float(fair),
        union_ranks={tuple(labels[c] for c in s): v for s, v in f.items()},
        exact={"lambda_star": lam, "pof": pof, "fair_size": fair},
    )
