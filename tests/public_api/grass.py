"""GraSS's public API: one valid call of each callable, for the battery."""

from __future__ import annotations

import numpy as np
import paperplug_grass as g
import torch

from paperplug import seeded_torch
from paperplug.testing import Sweep

REASONS: dict[str, str] = {}
SHAPES = [(8, 6), (3, 9)]  # the model's two linear layers: (d_out, d_in + bias)


def _model() -> torch.nn.Module:
    with seeded_torch(0):
        return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))


def sweeps() -> dict[str, Sweep]:
    model, rng = _model(), np.random.default_rng(0)
    X = torch.as_tensor(rng.normal(size=(12, 5)), dtype=torch.float32)
    y = torch.as_tensor(rng.integers(0, 3, 12))
    G = torch.as_tensor(rng.normal(size=(8, 20)), dtype=torch.float32)
    factored = g.FactoredCompressor("logra", 8).fit(SHAPES)
    factors = g.layer_factors(model, X[:4], y[:4])
    attributor = g.InfluenceAttributor("factgrass", 8).cache(model, X, y)
    subsets = rng.random((6, 12)) < 0.5
    scores, values = rng.normal(size=(12, 3)), rng.normal(size=(6, 3))
    settings = {
        "kind": ["fjlt"],
        "k": [0],
        "blowup": [0],
        "seed": [-1],
    }
    return {
        "Compressor": Sweep(
            g.Compressor, ("grass", 8), bad_params={**settings, "sm_steps": [0], "sm_l1": [-1.0]}
        ),
        "Compressor.fit": Sweep(
            g.Compressor("sm", 4, sm_steps=2).fit, (20, G), bad_params={"p": [0]}
        ),
        "Compressor.compress": Sweep(
            g.Compressor("grass", 8).fit(20).compress,
            (G,),
            accepts={"G:empty": "an empty batch compresses to (0, k)"},
        ),
        "FactoredCompressor": Sweep(
            g.FactoredCompressor, ("factgrass", 8), bad_params={**settings, "kind": ["grass"]}
        ),
        "FactoredCompressor.fit": Sweep(
            g.FactoredCompressor("factgrass", 8).fit, (SHAPES,), bad_params={"shapes": [[(0, 3)]]}
        ),
        "FactoredCompressor.compress": Sweep(
            factored.compress, (factors,), bad_params={"reduced": ["yes"]}
        ),
        "GradientFeatures": Sweep(
            g.GradientFeatures,
            ("factgrass", 8),
            bad_params={**settings, "target": ["accuracy"], "layers": ["0"], "batch_size": [0]},
        ),
        "GradientFeatures.__call__": Sweep(g.GradientFeatures("factgrass", 8), (model, X, y)),
        "InfluenceAttributor": Sweep(
            g.InfluenceAttributor,
            ("factgrass", 8),
            bad_params={
                **settings,
                "target": ["accuracy"],
                "damping": [0.0],
                "preconditioner": ["diag"],
                "layers": ["0"],
                "batch_size": [0],
            },
        ),
        "InfluenceAttributor.cache": Sweep(g.InfluenceAttributor("grass", 8).cache, (model, X, y)),
        "InfluenceAttributor.explain": Sweep(
            g.InfluenceAttributor("grass", 8).explain,
            (model, (X[:2], y[:2])),
            {"train": (X, y)},
            bad_params={"target": ["accuracy"], "inputs": [(X[:2],)], "train": [(X, y[:3])]},
        ),
        "InfluenceAttributor.attribute": Sweep(
            attributor.attribute, (X[:3], y[:3]), bad_params={"damping": [0.0, -1.0]}
        ),
        "InfluenceAttributor.choose_damping": Sweep(
            attributor.choose_damping,
            (X[:3], y[:3], subsets, values),
            {"grid": (0.1, 1.0)},
            bad_params={"grid": [(), (0.0,)]},
        ),
        "SJLT": Sweep(
            g.SJLT, (20, 8, torch.Generator().manual_seed(0)), bad_params={"n": [0], "k": [0]}
        ),
        "factored_layers": Sweep(g.factored_layers, (model,)),
        "layer_factors": Sweep(
            g.layer_factors,
            (model, X, y),
            {"maps": factored.maps},
            bad_params={"target": ["accuracy"], "layers": [["1"], "0"], "maps": [[]]},
            accepts={
                f"maps[0][{j}]:width": "LoGra's projection may have any width (its features)"
                for j in (0, 1)
            },
        ),
        "lds": Sweep(g.lds, (scores, subsets, values), width=False),
        "learn_selective_mask": Sweep(
            g.learn_selective_mask,
            (G, 4),
            {"steps": 3},
            bad_params={"width": [0, 21], "steps": [0], "l1": [-1.0], "lr": [0.0], "seed": [-1]},
            width=False,  # gradients of any dimension
        ),
        "per_sample_gradients": Sweep(
            g.per_sample_gradients, (model, X, y), bad_params={"target": ["accuracy"]}
        ),
        "target_values": Sweep(
            g.target_values,
            (model(X).detach(), y),
            bad_params={"target": ["accuracy"]},
            width=False,  # logits of any number of classes
        ),
    }
