"""The paper's evaluation (§5): p-faithfulness of the surrogate on held-out coalitions, the
second-order pointing game (PGR) on mosaics, and the insertion/deletion area (AID) with
greedy clique growth (MIF/LIF), each beside its first-order baseline."""

from __future__ import annotations

import warnings

import numpy as np

from paperplug.checks import check_array, check_choice, check_scalar, check_seed, check_type
from paperplug_fixlip.game import DualEncoderGame, FunctionGame
from paperplug_fixlip.interactions import Interactions
from paperplug_fixlip.sampling import shapley_size_weights


def _r2(y: np.ndarray, pred: np.ndarray, w: np.ndarray | None = None) -> float:
    w = np.ones_like(y) if w is None else w
    mean = np.average(y, weights=w)
    total = np.sum(w * (y - mean) ** 2)
    return float(1 - np.sum(w * (y - pred) ** 2) / total) if total > 0 else float("nan")


def p_faithfulness(
    game: DualEncoderGame | FunctionGame,
    interactions: Interactions,
    n_samples: int = 512,
    *,
    p: float | None = None,
    random_state: int | np.random.Generator | None = 0,
) -> dict[str, float]:
    """How well Σ_{S⊆T} φ_S reproduces ν(T) on held-out coalitions T ∼ Bernoulli(p)^n:
    R², MSE, Pearson, Spearman, Kendall; plus R² on KernelSHAP-sized coalitions
    ("r2_shapley_weighted"), the Shapley mode's notion of faithfulness."""
    from scipy import stats

    check_type(game, "game", (DualEncoderGame, FunctionGame))
    check_type(interactions, "interactions", Interactions)
    check_scalar(n_samples, "n_samples", "int", low=3)
    check_scalar(p, "p", low=0, high=1, inclusive="neither", allow_none=True)
    rng = np.random.default_rng(check_seed(random_state, "random_state"))
    p = interactions.p if p is None else p
    p = 0.5 if p is None else float(p)
    n = game.n_players
    if n != interactions.n_players:
        raise ValueError("the game and the interactions have different numbers of players")
    held = rng.random((n_samples, n)) < p
    y = game(held) - game.empty_value
    pred = interactions.predict(held)
    sizes = (
        rng.choice(n + 1, size=n_samples, p=shapley_size_weights(n))
        if n > 1
        else np.ones(n_samples, int)
    )
    shap = np.argsort(rng.random((n_samples, n)), axis=1) < sizes[:, None]
    y_s = game(shap) - game.empty_value
    return {
        "r2": _r2(y, pred),
        "mse": float(np.mean((y - pred) ** 2)),
        "pearson": float(stats.pearsonr(y, pred)[0]),
        "spearman": float(stats.spearmanr(y, pred)[0]),
        "kendall": float(stats.kendalltau(y, pred)[0]),
        "r2_shapley_weighted": _r2(y_s, interactions.predict(shap)),
    }


def _pgr(matrix: np.ndarray, patch_regions: np.ndarray, token_regions: np.ndarray) -> float:
    scores = []
    for t, region in enumerate(token_regions):
        if region < 0:
            continue
        phi = matrix[:, t]
        inside = patch_regions == region
        correct = phi[inside].clip(min=0).sum() + (-phi[~inside]).clip(min=0).sum()
        wrong = (-phi[inside]).clip(min=0).sum() + phi[~inside].clip(min=0).sum()
        if correct + wrong > 0:
            scores.append(correct / (correct + wrong))
    return float(np.mean(scores)) if scores else float("nan")


def pointing_game(interactions: Interactions, patch_regions, token_regions) -> dict[str, float]:
    """The pointing game ratio (§5.1). For each text token t naming a region: correct mass =
    positive φ(patch, t) inside t's region + |negative φ| outside; PGR = correct / total,
    averaged over tokens. First order scores the patches' WBV the same way for every token.
    `patch_regions` (n_a,) region id per patch; `token_regions` (n_b,) region id, -1 = none."""
    check_type(interactions, "interactions", Interactions)
    if interactions.n_a is None:
        raise ValueError("the pointing game needs two modalities (image and text)")
    patch_regions = check_array(patch_regions, "patch_regions", dtype="int")
    token_regions = check_array(token_regions, "token_regions", dtype="int")
    n_a, n_b = interactions.n_a, interactions.n_players - interactions.n_a
    if patch_regions.shape != (n_a,) or token_regions.shape != (n_b,):
        raise ValueError(f"patch_regions must be ({n_a},) and token_regions ({n_b},)")
    wbv = interactions.to_first_order()[:n_a]
    return {
        "pgr_second_order": _pgr(interactions.cross_matrix, patch_regions, token_regions),
        "pgr_first_order": _pgr(np.repeat(wbv[:, None], n_b, axis=1), patch_regions, token_regions),
    }


def _greedy_cliques(first: np.ndarray, second: np.ndarray, sign: float) -> list[np.ndarray]:
    """For each size k, the best clique over greedy growths from every start player of
    sign · (Σ_{i∈S} φ_i + Σ_{i<j∈S} φ_ij)."""
    n = len(first)
    best_score = np.full(n + 1, -np.inf)
    best: list[np.ndarray] = [np.zeros(0, int)] + [np.zeros(0, int)] * n
    for start in range(n):
        members = [start]
        gain = sign * (first + second[start])  # score gain of adding j to {start}
        score = sign * first[start]
        in_set = np.zeros(n, bool)
        in_set[start] = True
        for k in range(1, n + 1):
            if score > best_score[k]:
                best_score[k], best[k] = score, np.array(members)
            if k == n:
                break
            j = int(np.argmax(np.where(in_set, -np.inf, gain)))
            score += gain[j]
            members.append(j)
            in_set[j] = True
            gain = gain + sign * second[j]
    return best


def insertion_deletion(
    game: DualEncoderGame | FunctionGame,
    interactions: Interactions,
    *,
    order: int = 2,
    scale: str = "range",
) -> dict[str, object]:
    """Insertion curves (§5.2): ν of the most (MIF) and least (LIF) influential coalitions of
    each size, minus ν(∅), divided by the range of values the curves cover (`scale="range"`)
    or by ν(N) − ν(∅) as the official code does (`scale="official"`, numbers comparable with
    the paper's); AID = mean(MIF − LIF) (higher: the explanation ranks coalitions better).
    Order 2 grows cliques greedily; order 1 sorts WBV."""
    check_type(game, "game", (DualEncoderGame, FunctionGame))
    check_type(interactions, "interactions", Interactions)
    check_choice(order, "order", (1, 2))
    check_choice(scale, "scale", ("range", "official"))
    n = game.n_players
    if order == 2:
        first, second = interactions.first_order, interactions.second_order
        mif, lif = _greedy_cliques(first, second, 1.0), _greedy_cliques(first, second, -1.0)
    else:
        ranking = np.argsort(-interactions.to_first_order(), kind="stable")
        mif = [ranking[:k] for k in range(n + 1)]
        lif = [ranking[::-1][:k] for k in range(n + 1)]
    coalitions = np.zeros((2 * (n + 1), n), bool)
    for k in range(n + 1):
        coalitions[k, mif[k]] = True
        coalitions[n + 1 + k, lif[k]] = True
    values = game(coalitions)
    low = values[0]
    span = values.max() - values.min()
    if scale == "official":
        # [ν(∅), ν(N)] maps to [0, 1]; near-zero ν(N) − ν(∅) blows the curves up
        full = values[n] - low
        if abs(full) < 1e-12:
            raise ValueError("scale='official' divides by ν(N) − ν(∅) = 0: use scale='range'")
        if abs(full) < 0.1 * span:
            warnings.warn(
                f"ν(N) − ν(∅) = {full:.3g} is under a tenth of the curves' range {span:.3g}: "
                "the official scaling inflates this AID; scale='range' bounds it",
                RuntimeWarning,
                stacklevel=2,
            )
        span = full
    else:  # the range the curves cover: always positive unless the game is flat
        span = span if span > 1e-12 else 1.0
    curve_mif = (values[: n + 1] - low) / span
    curve_lif = (values[n + 1 :] - low) / span
    return {"aid": float(np.mean(curve_mif - curve_lif)), "mif": curve_mif, "lif": curve_lif}
