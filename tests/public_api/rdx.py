"""RDX's public API: one valid call of each callable, for the battery (two representations of
12 items, their neighbourhood ranks and affinities, a two-layer torch model)."""

from __future__ import annotations

import numpy as np
import paperplug_rdx as r
import torch

from paperplug import seeded_torch
from paperplug.testing import Sweep

REASONS: dict[str, str] = {}
SQUARE = "an (n, n) matrix over the items: one more column is rejected as not square"


def _vit():
    """A randomly initialised ViT of 8 × 8 images (no weights loaded)."""
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(image_size=8, patch_size=4, hidden_size=8, num_hidden_layers=1,
                       num_attention_heads=1, intermediate_size=8)  # fmt: skip
    with seeded_torch(0):
        return ViTModel(config).eval()


def sweeps() -> dict[str, Sweep]:
    rng = np.random.default_rng(0)
    R0, R1 = rng.normal(size=(12, 3)), rng.normal(size=(12, 4))
    D0, D1 = r.neighborhood_ranks(R0), r.neighborhood_ranks(R1)
    delta = r.difference(D0, D1, gamma=0.1)
    A10, _ = r.affinities(delta)
    labels = rng.integers(0, 2, 12)
    with seeded_torch(0):
        model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    images = rng.random((5, 3, 8, 8)).astype(np.float32)
    return {
        "hf_hidden_states": Sweep(
            r.hf_hidden_states,
            (_vit(), images),
            {"batch_size": 2},
            bad_params={"layer": [2, -3], "pool": ["max"], "batch_size": [0]},
            reasons={
                "tokenizer": "a Hugging Face tokenizer (None: the model's, or none for images)"
            },
        ),
        "neighborhood_ranks": Sweep(r.neighborhood_ranks, (R0,), width=False),
        "RDX.representations": Sweep(
            r.RDX().representations,
            (None, (R0, R1), None),
            bad_params={"inputs": [(R0,), (R0, R1[:5])], "model": [(model,), "a model"]},
            reasons={"layer": "read only when model is given (None here: the representations)"},
            width=False,  # two models' widths may differ
        ),
        "max_normalized": Sweep(r.max_normalized, (R0,), width=False),
        "local_scaling": Sweep(
            r.local_scaling, (R0,), {"k": 3}, bad_params={"k": [0]}, width=False
        ),
        "difference": Sweep(
            r.difference,
            (D0, D1),
            {"gamma": 0.1},
            bad_params={"gamma": [0.0], "kind": ["global"], "D1": [D1[:5, :5]]},
        ),
        "affinities": Sweep(r.affinities, (delta,), bad_params={"beta": [0.0]}),
        "spectral_clusters": Sweep(
            r.spectral_clusters,
            (A10, 2),
            bad_params={"n_clusters": [0, 12], "seed": [-1], "A": [-A10]},
        ),
        "seeded_neighbourhoods": Sweep(
            r.seeded_neighbourhoods,
            (A10, 2),
            {"size": 3},
            bad_params={"n_clusters": [0], "size": [0, 13], "method": ["degree"], "A": [-A10]},
        ),
        "neighbourhood_grid": Sweep(
            r.neighbourhood_grid,
            (np.arange(6), A10, R1),
            {"size": 3},
            bad_params={"members": [np.array([0, 12]), np.array([1, 1, 2, 3])], "size": [0]},
            accepts={"R_close:width": "a representation of any dimension"},
        ),
        "bsr": Sweep(
            r.bsr,
            (np.arange(4), D0, D1),
            bad_params={"grid": [np.array([0, 12])], "D_far": [D1[:5, :5]]},
        ),
        "mbsr": Sweep(r.mbsr, ([0.5, 0.75],), bad_params={"values": [[1.5], [-0.1]]}),
        "linear_cka": Sweep(r.linear_cka, (R0, R1), bad_params={"Y": [R1[:5]]}, width=False),
        "debiased_cka": Sweep(
            r.debiased_cka,
            (R0, R1),
            bad_params={"Y": [R1[:5]], "max_items": [3], "seed": [-1]},
            width=False,
        ),
        "align_linear": Sweep(
            r.align_linear,
            (R0, R1),
            {"steps": 2},
            bad_params={
                "target": [R1[:5]],
                "steps": [0],
                "lr": [0.0],
                "train_fraction": [0.0, 1.0],
                "seed": [-1],
            },
            width=False,
        ),
        "label_guidance": Sweep(
            r.label_guidance,
            (D0, labels),
            bad_params={"factor": [0.5], "labels": [labels[:5]]},
            accepts={"labels:dtype": "labels of any kind (numbers or strings)"},
        ),
        "knn_ranks": Sweep(r.knn_ranks, (R0, 3), bad_params={"k": [0]}, width=False),
        "sparse_difference": Sweep(
            r.sparse_difference,
            (R0, R1),
            {"k": 3, "gamma": 0.1, "beta": 5.0, "sample": 6},
            bad_params={
                "R1": [R1[:5]],
                "k": [0],
                "gamma": [0.0],
                "beta": [0.0],
                "sample": [0],
                "seed": [-1],
            },
            width=False,
        ),
        "layer_features": Sweep(
            r.layer_features,
            (model, R0, "1"),
            {"batch_size": 5},
            bad_params={"layer": ["9"], "batch_size": [0]},
        ),
    }
