"""Exact FWBII against closed forms and shapiq: the Möbius identity, degree-2 games, the
weighted Banzhaf values, and the Shapley-weighted baseline."""

from itertools import combinations

import numpy as np
import pytest
from games import encoder_pair, table_game
from paperplug_fixlip import (
    FunctionGame,
    approximate,
    design_matrix,
    exact_fsii,
    exact_fwbii,
    interaction_lookup,
    weighted_banzhaf_interactions,
)
from paperplug_fixlip.lookup import all_coalitions


def test_p_half_equals_shapiq_exact_fbii():
    shapiq = pytest.importorskip("shapiq")
    value, table = table_game(7, seed=1)
    ours = exact_fwbii(FunctionGame(value, 7), p=0.5)
    ref = shapiq.ExactComputer(value, n_players=7)("FBII", order=2)
    for s in ours.lookup[1:]:
        assert ours[s] == pytest.approx(ref[s], abs=1e-10)
    # shapiq keeps ν(∅) in the empty term; we fit ν(T) − ν(∅) (the paper's normalisation)
    assert ours[()] + table[0] == pytest.approx(ref[()], abs=1e-10)


def test_shapley_mode_equals_shapiq_exact_fsii():
    shapiq = pytest.importorskip("shapiq")
    value, _ = table_game(6, seed=2)
    ours = exact_fsii(FunctionGame(value, 6))
    ref = shapiq.ExactComputer(value, n_players=6)("FSII", order=2)
    for s in ours.lookup[1:]:
        assert ours[s] == pytest.approx(ref[s], abs=1e-8)


@pytest.mark.parametrize("p", [0.3, 0.7])
def test_top_order_is_the_weighted_banzhaf_interaction_index(p):
    """Möbius identity: φ_ij = I_p({i, j}) = Σ_{T⊇{i,j}} p^{|T|-2} m(T), computed from the
    game's full table by the Möbius transform, independently of the regression."""
    value, table = table_game(6, seed=3)
    ours = exact_fwbii(FunctionGame(value, 6), p=p)
    index = weighted_banzhaf_interactions(table - table[0], p)
    for i, j in combinations(range(6), 2):
        assert ours[(i, j)] == pytest.approx(index[(1 << i) | (1 << j)], abs=1e-12)


def test_mobius_transform_by_definition():
    """I_p with the brute-force Möbius sum m(S) = Σ_{T⊆S} (-1)^{|S|-|T|} ν(T)."""
    _, table = table_game(4, seed=4)
    m = {
        s: sum((-1) ** bin(s ^ t).count("1") * table[t] for t in range(16) if t & s == t)
        for s in range(16)
    }
    brute = {
        s: sum(
            0.3 ** (bin(t).count("1") - bin(s).count("1")) * m[t] for t in range(16) if t & s == s
        )
        for s in range(16)
    }
    fast = weighted_banzhaf_interactions(table, 0.3)
    assert np.allclose([brute[s] for s in range(16)], fast, atol=1e-12)


@pytest.mark.parametrize("p", [0.3, 0.5, 0.7])
def test_degree_two_game_recovered_exactly(p):
    """ν(T) = Σ_{|S|≤2, S⊆T} c_S is its own faithful index at every p, exactly and from a
    sample with more coalitions than interactions."""
    n = 8
    lookup = interaction_lookup(n, 2)
    coef = np.random.default_rng(5).normal(size=len(lookup))
    coef[0] = 0.0

    def value(coalitions):
        return design_matrix(coalitions, lookup) @ coef

    assert np.allclose(exact_fwbii(FunctionGame(value, n), p=p).values, coef, atol=1e-10)
    sampled = approximate(FunctionGame(value, n), 60, p=p, random_state=0)
    assert np.allclose(sampled.values, coef, atol=1e-8)


@pytest.mark.parametrize("p", [0.3, 0.5, 0.7])
def test_weighted_banzhaf_values_identity(p):
    """WBV_i = φ_i + p Σ_j φ_ij equals the game's WBV by its definition
    E_{T∼μ_p(N∖i)}[ν(T ∪ i) − ν(T)], summed over every T."""
    n = 6
    value, _ = table_game(n, seed=6)
    ours = exact_fwbii(FunctionGame(value, n), p=p).to_first_order()
    coalitions = all_coalitions(n)
    for i in range(n):
        rest = coalitions[~coalitions[:, i]]
        sizes = rest.sum(axis=1)
        weight = p**sizes * (1 - p) ** (n - 1 - sizes)
        with_i = rest.copy()
        with_i[:, i] = True
        assert ours[i] == pytest.approx(np.sum(weight * (value(with_i) - value(rest))), abs=1e-12)


@pytest.mark.parametrize("p", [0.3, 0.5])
def test_dual_enumeration_equals_joint_enumeration(p):
    """Enumerating each modality and pairing by matmul (2^n_a + 2^n_b passes) gives the same
    index as enumerating the 2^n joint coalitions; the image × text-only lookup equals a
    brute-force weighted least squares on the full design matrix."""
    game = encoder_pair(4, 5, seed=7)
    dual = exact_fwbii(game, p=p)
    assert dual.encoder_calls == 2**4 + 2**5 + 2  # + the empty coalition's two passes
    joint = exact_fwbii(FunctionGame(game, 9), p=p)
    assert np.allclose(dual.values, joint.values, atol=1e-10)
    cross = exact_fwbii(game, p=p, crossmodal_only=True)
    coalitions = all_coalitions(9)
    sizes = coalitions.sum(axis=1)
    root_w = np.sqrt(p**sizes * (1 - p) ** (9 - sizes))
    x = design_matrix(coalitions, cross.lookup)
    y = game(coalitions) - game.empty_value
    brute = np.linalg.lstsq(x * root_w[:, None], y * root_w, rcond=None)[0]
    assert np.allclose(cross.values, brute, atol=1e-10)
