"""What an estimator will allocate, computed from sizes alone before anything is allocated:
the all-pairs lookup of a ViT-B/16 grid (196 patches × 16 tokens, 22,578 terms) needs tens
of GiB of float64 normal equations, the image × text lookup (3,349 terms) a few MiB."""

from __future__ import annotations

from math import comb

GIB = 2**30
JOINT_BATCH = 4096  # rows of the design matrix held at once by the joint estimator
EXACT_BATCH = 2**14  # rows enumerated at once by the exact joint estimator


def lookup_size(
    n: int, max_order: int = 2, *, n_a: int | None = None, crossmodal_only: bool = False
) -> int:
    """The number of fitted terms: Σ_{k ≤ max_order} C(n, k), or 1 + n + n_a·(n − n_a) for
    the image × text lookup."""
    if crossmodal_only:
        return 1 + n + n_a * (n - n_a)
    return sum(comb(n, k) for k in range(min(max_order, n) + 1))


def dual_fit_bytes(
    n_a: int, n_b: int, rows_a: int, rows_b: int, *, max_order: int = 2, crossmodal: bool = False
) -> int:
    """Peak float64 bytes of `fit_dual` on rows_a × rows_b pairings: each modality's basis
    (its part of the lookup) as design matrix (twice: weighted) and Gram, the pair values,
    and, unless the lookup is the full image × text product, the m × m restricted normal
    matrix with its temporaries (about four copies)."""
    if crossmodal:
        basis_a, basis_b, extra = 1 + n_a, 1 + n_b, 0
    else:
        basis_a = lookup_size(n_a, max_order)
        basis_b = lookup_size(n_b, max_order)
        extra = 4 * lookup_size(n_a + n_b, max_order) ** 2
    per_side = 2 * rows_a * basis_a + basis_a**2 + 2 * rows_b * basis_b + basis_b**2
    return 8 * (per_side + 2 * rows_a * rows_b + basis_a * basis_b + extra)


def joint_fit_bytes(m: int, rows: int, batch: int = JOINT_BATCH) -> int:
    """Peak float64 bytes of the joint regression with m terms: the normal matrix with its
    update and the solver's copies (six m × m in all, with the conditioning check) and a
    batch of the design matrix, weighted and not."""
    return 8 * (6 * m * m + 2 * min(rows, batch) * m)


def fmt_bytes(size: float) -> str:
    """Bytes for a message: '3.8 GiB', '16 MiB'."""
    return f"{size / GIB:.1f} GiB" if size >= GIB else f"{size / 2**20:.0f} MiB"
