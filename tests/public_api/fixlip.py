"""FIxLIP's public API: one valid call of each callable, for the battery (a planted 4-player
game, a random dual encoder of 3 × 2 players, a tiny CLIP with its processor and a tiny BERT
with its tokenizer, built from transformers configs and a letter vocabulary)."""

from __future__ import annotations

import numpy as np
import paperplug_fixlip as f
import torch

from paperplug import seeded_torch
from paperplug.testing import Sweep

REASONS = {
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


MASKS_A, MASKS_B = np.array([[1, 0, 1], [0, 1, 1]]), np.array([[1, 0], [1, 1], [0, 1]])
LETTERS = "abcdefghijklmnopqrstuvwxyz"
LOOKUPS = [[], [(0, 0)], [(1, 0)], [(-1,)], [(0,), (0,)], [(2.5,)], ["a"]]


def _clip():
    """A tiny CLIPModel (16 px, 8-px patches: 4 image players) and its CLIPProcessor over a
    vocabulary of letters (a word is its letters, the last one ending the word)."""
    from transformers import (
        CLIPConfig,
        CLIPImageProcessor,
        CLIPModel,
        CLIPProcessor,
        CLIPTokenizer,
    )

    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    vocab |= {c: 2 + i for i, c in enumerate(LETTERS)} | {
        f"{c}</w>": 28 + i for i, c in enumerate(LETTERS)
    }
    layers = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)
    config = CLIPConfig(
        text_config=dict(
            vocab_size=len(vocab), max_position_embeddings=16, bos_token_id=0, eos_token_id=1,
            pad_token_id=1, **layers,
        ),
        vision_config=dict(image_size=16, patch_size=8, **layers),
        projection_dim=8,
    )  # fmt: skip
    with seeded_torch(0):
        model = CLIPModel(config).eval()
    image = CLIPImageProcessor(size={"shortest_edge": 16}, crop_size={"height": 16, "width": 16})
    return model, CLIPProcessor(image_processor=image, tokenizer=CLIPTokenizer(vocab=vocab))


def _bert():
    """A tiny BertModel and its BertTokenizer over a few words."""
    from transformers import BertConfig, BertModel, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "red", "dog", "the", "cat"]
    config = BertConfig(
        vocab_size=len(words), hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=16, max_position_embeddings=16,
    )  # fmt: skip
    with seeded_torch(0):
        model = BertModel(config).eval()
    return model, BertTokenizer(vocab={w: i for i, w in enumerate(words)})


def _regression() -> dict[str, Sweep]:
    """The regression's internals on 4 players (order ≤ 2) and a 3 × 2 dual game."""
    rng = np.random.default_rng(0)
    lookup = f.interaction_lookup(4)
    coalitions = np.array([[(i >> k) & 1 for k in range(4)] for i in range(16)], dtype=bool)
    values, weights = rng.normal(size=16), rng.random(16)
    equations = f.NormalEquations(lookup)
    equations.add(coalitions, values, weights)
    rows = f.design_matrix(coalitions[:2], lookup)
    ca, cb = coalitions[:8, :3], coalitions[:4, :2]  # every coalition of 3 and of 2 players
    wa, wb = np.full(8, 1 / 8), np.full(4, 1 / 4)
    data = {
        "coalitions": [coalitions[:, :3], coalitions + 0.5],
        "values": [values[:5]],
        "weights": [weights[:5], -weights],
    }
    return {
        "NormalEquations": Sweep(f.NormalEquations, (lookup,), bad_params={"lookup": LOOKUPS}),
        "NormalEquations.add": Sweep(
            f.NormalEquations(lookup).add,
            (coalitions, values, weights),
            bad_params=data,
            width=False,  # players the lookup leaves out may be there: no interaction uses them
        ),
        "NormalEquations.solve": Sweep(
            equations.solve,
            ((rows, values[:2]),),
            bad_params={"constraints": [(rows,), (rows, values[:1]), (rows[:, :3], values[:2])]},
        ),
        "design_matrix": Sweep(
            f.design_matrix,
            (coalitions, lookup),
            bad_params={"coalitions": data["coalitions"], "lookup": [*LOOKUPS, [(4,)]]},
            width=False,  # as NormalEquations.add: a lookup may leave players out
        ),
        "fit_dual": Sweep(
            f.fit_dual,
            (rng.normal(size=(8, 4)), ca, wa, cb, wb, f.interaction_lookup(5, n_a=3), 3),
            {"p": 0.5},
            bad_params={
                "y": [np.ones((8, 3))],
                "wa": [-wa, wa[:4]],
                "wb": [wb[:2]],
                "lookup": [*LOOKUPS, [(0, 5)]],
                "n_a": [0, 2, 4],
                "p": [0.0, 1.0],
            },
            accepts={"cb:width": "the text side's width is cb's: a lookup may leave players out"},
        ),
        "sample_coalitions": Sweep(
            f.sample_coalitions,
            (4, 10, f.shapley_size_weights(4), np.random.default_rng(0)),
            {"forced": (0, 4)},
            bad_params={
                "n": [0, 3],
                "budget": [0, 1],
                "size_weights": [-np.ones(5), np.zeros(5), np.ones(4)],
                "forced": [(5,), (-1,), (0, 0), (2.5,)],
            },
        ),
    }


def _adapters() -> dict[str, Sweep]:
    """The Hugging Face adapters on the tiny CLIP and BERT."""
    clip, processor = _clip()
    bert, tokenizer = _bert()
    with seeded_torch(0):
        pixels = torch.rand(1, 3, 16, 16)
    ids = np.array([[0, 28, 4, 48, 1]])  # <bos> a</w> c u</w> <eos>: 3 text players
    return {
        "clip_game": Sweep(
            f.clip_game,
            (clip, pixels, ids, np.ones((1, 5), dtype=np.int64)),
            {
                "image_masking": "baseline",
                "baseline_image": np.zeros((1, 3, 16, 16)),
                "text_masking": "mask_token",
                "mask_token_id": 1,
                "keep": ("first", "last"),
                "tokens": ["a", "c", "u"],
                "batch_size": 8,
                "device": "cpu",
            },
            bad_params={
                "pixel_values": [
                    np.zeros((3, 16, 16)),
                    np.zeros((1, 1, 16, 16)),
                    np.zeros((1, 3, 12, 12)),
                    np.zeros((1, 3, 24, 24)),
                ],
                "input_ids": [
                    ids[0],
                    np.array([[0, 28, 99, 1]]),
                    np.array([[0, -1, 4, 1]]),
                    np.zeros((1, 17), dtype=np.int64),
                ],
                "attention_mask": [np.zeros((1, 5)), np.array([[1, 1, 2, 1, 1]])],
                "image_masking": ["patch"],
                "baseline_image": [None, np.zeros((1, 3, 8, 8))],
                "text_masking": ["drop"],
                "mask_token_id": [None, -1, 54],
                "keep": [("middle",), "first"],
                "tokens": [["a"], [1, 2, 3]],
                "batch_size": [0],
                "device": ["nodevice"],
            },
        ),
        "clip_game_from_processor": Sweep(
            f.clip_game_from_processor,
            (clip, processor, np.full((16, 16, 3), 100, dtype=np.uint8), "a cat"),
            bad_params={"text": ["", "  ", "a " * 20]},
            accepts={
                "image:dtype": "a float image (0-255) is an image: the processor rescales it",
                "image:width": "a 4th channel is an RGBA image: the processor converts it to RGB",
            },
        ),
        "text_pair_game": Sweep(
            f.text_pair_game,
            (bert, tokenizer, "a red dog", "the cat"),
            {"masking": "mask_token", "pooling": "cls", "batch_size": 8, "device": "cpu"},
            bad_params={
                "text_a": ["", "dog " * 20],
                "text_b": ["  "],
                "masking": ["drop"],
                "pooling": ["max"],
                "batch_size": [0],
                "device": ["nodevice"],
            },
        ),
    }


#: why a valid call changes an argument it is given (Sweep.mutates)
COUNTED = (
    "the game counts the encoder calls spent on it (encoder_calls, the budget the paper reports)"
)


def sweeps() -> dict[str, Sweep]:
    game, pair = f.FunctionGame(_value, 4), _pair()
    result = f.exact_fwbii(game)
    table = f.game_table(_value, 4)
    rng = np.random.default_rng(0)
    pair_result = f.exact_fwbii(pair)
    return (
        _regression()
        | _adapters()
        | {
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
                mutates={"game": COUNTED},
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
                mutates={"game": COUNTED},
            ),
            "banzhaf_size_weights": Sweep(
                f.banzhaf_size_weights, (4, 0.5), bad_params={"n": [0], **P}
            ),
            "exact_fsii": Sweep(
                f.exact_fsii,
                (game,),
                bad_params={"max_order": [0]},
                mutates={"game": COUNTED},
            ),
            "exact_fwbii": Sweep(
                f.exact_fwbii,
                (game,),
                bad_params={**P, "max_order": [0], "crossmodal_only": [1]},
                mutates={"game": COUNTED},
            ),
            "explain_game": Sweep(
                f.explain_game,
                (_value, 4),
                {"budget": 12},
                bad_params={
                    "n": [0],
                    **P,
                    "max_order": [0],
                    "mode": ["owen"],
                    "budget": [0],
                    **STATE,
                },
            ),
            "game_table": Sweep(f.game_table, (_value, 4), bad_params={"n": [0, 30]}),
            "insertion_deletion": Sweep(
                f.insertion_deletion,
                (game, result),
                bad_params={"order": [0, 3], "scale": ["log"]},
                mutates={"game": COUNTED},
            ),
            "interaction_lookup": Sweep(
                f.interaction_lookup,
                (4,),
                bad_params={"n": [0], "max_order": [-1], "n_a": [5, -1], "crossmodal_only": [1]},
            ),
            "moebius_transform": Sweep(f.moebius_transform, (table,), width=False),
            "p_faithfulness": Sweep(
                f.p_faithfulness,
                (game, result, 50),
                bad_params={"n_samples": [0], **P, **STATE},
                mutates={"game": COUNTED},
            ),
            "plot_interaction_heatmap": Sweep(
                f.plot_interaction_heatmap,
                (pair_result,),
                reasons={
                    "title": "any text is a title",
                    "ax": "a matplotlib Axes (None: a new one)",
                },
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
                f.weighted_banzhaf_interactions,
                (table, 0.5),
                bad_params={"table": [np.ones(3)], **P},
            ),
            "weighted_banzhaf_values": Sweep(
                f.weighted_banzhaf_values, (table, 0.5), bad_params={"table": [np.ones(3)], **P}
            ),
            "FIxLIP.interactions": Sweep(
                f.FIxLIP().interactions,
                (pair,),
                mutates={"game": "its encoder_calls counts the encoder passes (a meter)"},
            ),
            "DualEncoderGame.embed_a": Sweep(
                pair.embed_a, (MASKS_A,), bad_params={"masks": [MASKS_A * 2]}
            ),
            "DualEncoderGame.embed_b": Sweep(
                pair.embed_b, (MASKS_B,), bad_params={"masks": [MASKS_B * 2]}
            ),
            "DualEncoderGame.cross_values": Sweep(
                pair.cross_values,
                (MASKS_A, MASKS_B),
                bad_params={"masks_a": [MASKS_A * 2], "masks_b": [MASKS_B * 2]},
            ),
        }
    )
