"""FIxLIP's public API: one valid call of each callable, for the battery (a planted 4-player
game, a random dual encoder of 3 × 2 players)."""

from __future__ import annotations

import numpy as np
import paperplug_fixlip as f

from paperplug.testing import Sweep

REASONS = {
    "FIxLIP": "the Explainer role's contract sweeps it (packages/fixlip/tests/test_contract.py)",
    "Interactions": "a result type (what the estimators return)",
}
P = {"p": [0.0, 1.0, -0.1]}
STATE = {"random_state": [-1]}


def _value(coalitions):
    c = np.asarray(coalitions, dtype=float)
    return 2 * c[:, 0] * c[:, 1] - c[:, 2] + 0.5 * c[:, 3]


def _pair() -> f.DualEncoderGame:
    rng = np.random.default_rng(0)
    wa, wb = rng.normal(size=(3, 4)), rng.normal(size=(2, 4))
    return f.DualEncoderGame(lambda m: np.tanh(m @ wa), lambda m: np.tanh(m @ wb), 3, 2)


def sweeps() -> dict[str, Sweep]:
    game, pair = f.FunctionGame(_value, 4), _pair()
    result = f.exact_fwbii(game)
    table = f.game_table(_value, 4)
    rng = np.random.default_rng(0)
    pair_result = f.exact_fwbii(pair)
    return {
        "DualEncoderGame": Sweep(
            f.DualEncoderGame,
            (pair.encode_a, pair.encode_b, 3, 2),
            bad_params={
                "n_a": [0],
                "n_b": [0],
                "scale": [0.0],
                "normalize": [1],
                "batch_size": [0],
                "names_a": [["x"]],
                "names_b": [[3, 4]],
            },
        ),
        "FunctionGame": Sweep(
            f.FunctionGame, (_value, 4), bad_params={"n": [0], "batch_size": [0]}
        ),
        "approximate": Sweep(
            f.approximate,
            (game, 12),
            bad_params={
                "budget": [0],
                **P,
                "max_order": [0],
                "mode": ["owen"],
                "crossmodal_only": [1],
                **STATE,
                "batch_size": [0],
            },
        ),
        "approximate_crossmodal": Sweep(
            f.approximate_crossmodal,
            (pair,),
            {"budget_a": 8, "budget_b": 4},
            bad_params={
                "budget": [0],
                "budget_a": [0],
                "budget_b": [0],
                **P,
                "max_order": [0],
                "crossmodal_only": [1],
                **STATE,
            },
        ),
        "banzhaf_size_weights": Sweep(f.banzhaf_size_weights, (4, 0.5), bad_params={"n": [0], **P}),
        "exact_fsii": Sweep(f.exact_fsii, (game,), bad_params={"max_order": [0]}),
        "exact_fwbii": Sweep(
            f.exact_fwbii, (game,), bad_params={**P, "max_order": [0], "crossmodal_only": [1]}
        ),
        "explain_game": Sweep(
            f.explain_game,
            (_value, 4),
            {"budget": 12},
            bad_params={"n": [0], **P, "max_order": [0], "mode": ["owen"], "budget": [0], **STATE},
        ),
        "game_table": Sweep(f.game_table, (_value, 4), bad_params={"n": [0, 30]}),
        "insertion_deletion": Sweep(
            f.insertion_deletion, (game, result), bad_params={"order": [0, 3], "scale": ["log"]}
        ),
        "interaction_lookup": Sweep(
            f.interaction_lookup,
            (4,),
            bad_params={"n": [0], "max_order": [-1], "n_a": [5, -1], "crossmodal_only": [1]},
        ),
        "moebius_transform": Sweep(f.moebius_transform, (table,), width=False),
        "p_faithfulness": Sweep(
            f.p_faithfulness, (game, result, 50), bad_params={"n_samples": [0], **P, **STATE}
        ),
        "plot_interaction_heatmap": Sweep(
            f.plot_interaction_heatmap,
            (pair_result,),
            reasons={"title": "any text is a title", "ax": "a matplotlib Axes (None: a new one)"},
        ),
        "plot_top_pairs": Sweep(
            f.plot_top_pairs,
            (pair_result, rng.random((3, 3)), (1, 3)),
            bad_params={"grid": [(2, 2), (0, 3)], "k": [0]},
            reasons={"ax": "a matplotlib Axes (None: a new one)"},
            accepts={"image:width": "an image of any size: the grid divides it"},
        ),
        "pointing_game": Sweep(
            f.pointing_game, (pair_result, np.array([0, 0, 1]), np.array([0, 1])), width=False
        ),
        "shapley_size_weights": Sweep(f.shapley_size_weights, (4,), bad_params={"n": [0, 1]}),
        "small_side_floor": Sweep(
            f.small_side_floor,
            (3, 2, 2, False),
            bad_params={"n_a": [0], "n_b": [0], "max_order": [0], "crossmodal_only": [1]},
        ),
        "split_budget": Sweep(
            f.split_budget,
            (64, 3, 2),
            bad_params={"budget": [0], "n_a": [0], "n_b": [0], "min_small": [0]},
        ),
        "split_passes": Sweep(
            f.split_passes, (16, 3, 2), bad_params={"passes": [0], "n_a": [0], "n_b": [0]}
        ),
        "weighted_banzhaf_interactions": Sweep(
            f.weighted_banzhaf_interactions, (table, 0.5), bad_params={"table": [np.ones(3)], **P}
        ),
        "weighted_banzhaf_values": Sweep(
            f.weighted_banzhaf_values, (table, 0.5), bad_params={"table": [np.ones(3)], **P}
        ),
    }
