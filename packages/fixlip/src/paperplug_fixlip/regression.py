"""The weighted least-squares fit behind every faithful index (§3, Eq. "FWBII"):
φ = argmin Σ_T w(T) (ν(T) − Σ_{S⊆T, S∈lookup} φ_S)², solved from the normal equations,
which are accumulated batch by batch so the design matrix is never held whole."""

from __future__ import annotations

import warnings

import numpy as np

from paperplug.checks import check_array, check_consistent_length, check_sequence
from paperplug_fixlip.lookup import Interaction, check_lookup, design_matrix


class NormalEquations:
    """Running XᵀWX and XᵀWy over batches of (coalitions, values, weights)."""

    def __init__(self, lookup: list[Interaction]) -> None:
        self.lookup = check_lookup(lookup)
        m = len(self.lookup)
        self.gram = np.zeros((m, m))
        self.rhs = np.zeros(m)
        self.rows = 0

    def add(self, coalitions: np.ndarray, values: np.ndarray, weights: np.ndarray) -> None:
        x = design_matrix(coalitions, self.lookup)
        values = check_array(values, "values", ndim=1)
        weights = check_weights(weights, "weights")
        check_consistent_length(coalitions=x, values=values, weights=weights)
        wx = x * weights[:, None]
        self.gram += wx.T @ x
        self.rhs += wx.T @ values
        self.rows += len(x)

    def solve(self, constraints: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """φ; `constraints` (C, d) adds C φ = d (the Shapley mode's empty/full rows)."""
        if constraints is not None:
            items = check_sequence(constraints, "constraints", what="(C, d)")
            if len(items) != 2:
                raise ValueError(f"constraints must be a pair (C, d), got {len(items)} item(s)")
            c = check_array(items[0], "constraints[0]", shape=(None, len(self.lookup)))
            d = check_array(items[1], "constraints[1]", shape=(len(c),))
            constraints = (c, d)
        return solve_normal(self.gram, self.rhs, constraints)


def check_weights(weights: np.ndarray, name: str) -> np.ndarray:
    """Regression weights: a finite, non-negative 1-D float array."""
    weights = check_array(weights, name, ndim=1)
    if (weights < 0).any():
        raise ValueError(f"{name} must be non-negative, got minimum {weights.min():.3g}")
    return weights


def solve_normal(
    gram: np.ndarray, rhs: np.ndarray, constraints: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """Solve (XᵀWX) φ = XᵀWy, with equality constraints through the KKT system; a singular
    system (budget below the number of regressors) falls back to the minimum-norm solution."""
    m = len(rhs)
    if constraints is not None:
        c, d = constraints
        k = len(d)
        kkt = np.zeros((m + k, m + k))
        kkt[:m, :m], kkt[:m, m:], kkt[m:, :m] = gram, c.T, c
        gram, rhs = kkt, np.concatenate([rhs, d])
    try:
        if constraints is None and not _well_posed(gram):
            raise np.linalg.LinAlgError("singular normal equations")
        phi = np.linalg.solve(gram, rhs)
        if not np.all(np.isfinite(phi)):
            raise np.linalg.LinAlgError("non-finite solution")
    except np.linalg.LinAlgError:
        warnings.warn(
            "the regression is underdetermined (budget below the number of interactions, or "
            "degenerate coalitions): returning the minimum-norm solution",
            RuntimeWarning,
            stacklevel=3,
        )
        phi = np.linalg.lstsq(gram, rhs, rcond=None)[0]
    return phi[:m]


def exact_gram(lookup: list[Interaction], n: int, p: float) -> np.ndarray:
    """Σ_T μ_p(T) x_S(T) x_R(T) = p^{|S∪R|} (n players): the Gram matrix of the full
    distribution, so the exact index needs only XᵀWy, and a sample's Gram is judged by it."""
    members = np.zeros((len(lookup), n))
    for k, subset in enumerate(lookup):
        members[k, list(subset)] = 1.0
    sizes = members.sum(axis=1)
    return float(p) ** (sizes[:, None] + sizes[None, :] - members @ members.T)


def coverage(gram: np.ndarray, reference: np.ndarray) -> float:
    """λ_min(G, G*): the smallest generalised eigenvalue of a sampled Gram matrix against the
    exact one. 1 / λ_min is the worst inflation of the estimate's variance along a direction."""
    low = np.linalg.cholesky(reference)
    whitened = np.linalg.solve(low, np.linalg.solve(low, gram).T)
    return float(np.linalg.eigvalsh((whitened + whitened.T) / 2)[0])


def kron_solve(gram_a: np.ndarray, gram_b: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """Φ = G_a⁻¹ R G_b⁻¹: the exact solution when the lookup is the full product of the two
    modalities' [1, x] bases (second order = image × text only), since then
    XᵀWX = G_a ⊗ G_b and XᵀWy = vec(R). Costs O(n_a³ + n_b³), no design matrix at all."""
    left = _solve_or_pinv(gram_a, cross)
    return _solve_or_pinv(gram_b, left.T).T


def _well_posed(gram: np.ndarray) -> bool:
    """A symmetric PSD Gram matrix is solvable when its eigenvalues span < 1e12."""
    eig = np.linalg.eigvalsh(gram)
    return bool(eig[-1] > 0 and eig[0] > 1e-12 * eig[-1])


def _solve_or_pinv(gram: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if _well_posed(gram):
        return np.linalg.solve(gram, rhs)
    warnings.warn(
        "a modality's Gram matrix is singular (too few coalitions): minimum-norm solution",
        RuntimeWarning,
        stacklevel=3,
    )
    return np.linalg.pinv(gram) @ rhs
