"""AdaptGrad's public API: one valid call of each callable, for the battery (a linear model on
4 inputs of 2 channels × 3, a few noise samples)."""

from __future__ import annotations

import tempfile
from types import SimpleNamespace

import paperplug_adaptgrad as a
import torch

from paperplug import seeded_torch
from paperplug.testing import Sweep

CONTRACT = "the Explainer role's contract sweeps it (packages/adaptgrad/tests/test_contract.py)"
REASONS = {
    "NoiseGrad": CONTRACT,
    "NoiseGradPlusPlus": CONTRACT,
    "GradientSmoothing": "the base of the four explainers the Explainer contract sweeps (its "
    "noise_scale is theirs to define)",
}
C = [0.0, 1.0]
ANY_WIDTH = "scalar bounds fit inputs of any width"
ANY = {"points:width": ANY_WIDTH}
OPERATOR = {
    "x:width": "the gradient operator takes the model's width (its ValueError names its points)"
}


def _model() -> torch.nn.Module:
    with seeded_torch(0):
        return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(6, 3))


_SAVED, _EMPTY = tempfile.TemporaryDirectory(), tempfile.TemporaryDirectory()  # removed at exit


def _saved_vit() -> str:
    """A randomly initialised ViT classifier of 8 × 8 images and its processor, saved to a
    temporary folder (no weights downloaded): the path load_hf_classifier reads."""
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    path = _SAVED.name
    config = ViTConfig(image_size=8, patch_size=4, hidden_size=8, num_hidden_layers=1,
                       num_attention_heads=1, intermediate_size=8, num_labels=3)  # fmt: skip
    with seeded_torch(0):
        ViTForImageClassification(config).save_pretrained(path)
    ViTImageProcessor(size={"height": 8, "width": 8}).save_pretrained(path)
    return path


def sweeps() -> dict[str, Sweep]:
    g = torch.Generator().manual_seed(0)
    x = torch.rand(4, 2, 3, generator=g) * 0.8 + 0.1
    targets = torch.tensor([0, 1, 2, 0])
    lo, hi = torch.tensor(0.0), torch.tensor(1.0)
    model = _model()
    forward = a.as_forward(model)
    gradient = lambda p, t: a.class_gradient(forward, p, t)  # noqa: E731
    sigma = a.adaptive_sigma(x, lo, hi)
    maps = a.vanilla_gradient(gradient, x, targets)
    curve = a.deletion_curve(forward, x, maps, targets, steps=4).contiguous()
    processor = SimpleNamespace(do_normalize=True, image_mean=[0.5, 0.4], image_std=[0.2, 0.3])
    return {
        "AdaptGrad.noise_scale": Sweep(
            a.AdaptGrad().noise_scale, (x, lo, hi), bad_params={"hi": [lo]}, accepts=ANY
        ),
        "SmoothGrad.noise_scale": Sweep(
            a.SmoothGrad().noise_scale, (x, lo, hi), bad_params={"hi": [lo]}, accepts=ANY
        ),
        "WeightNoise.operator": Sweep(
            a.WeightNoise(n_models=2).operator,
            (model, lambda f: lambda p, t: a.class_gradient(f, p, t), g),
            bad_params={"model": [forward]},
        ),
        "adaptive_sigma": Sweep(
            a.adaptive_sigma,
            (x, lo, hi),
            bad_params={"c": C, "hi": [lo]},
            accepts={"x:width": ANY_WIDTH},
        ),
        "resolve_bounds": Sweep(
            a.resolve_bounds,
            (x, (0.0, 1.0)),
            bad_params={"bounds": [(1.0, 0.0), (0.0,)], "channel_dim": [3]},
            accepts={"x:width": ANY_WIDTH},
        ),
        "smoothgrad_sigma": Sweep(
            a.smoothgrad_sigma,
            (x, lo, hi),
            bad_params={"alpha": [-0.1], "hi": [lo]},
            accepts={"x:width": ANY_WIDTH},
        ),
        "SmoothedGradient": Sweep(
            a.SmoothedGradient,
            (gradient, lambda p: 0.1 * torch.ones_like(p), 3),
            {"generator": torch.Generator().manual_seed(0), "bounds": (lo, hi), "batch_size": 8},
            bad_params={"n_samples": [0], "batch_size": [0]},
        ),
        "SmoothedGradient.__call__": Sweep(
            a.SmoothedGradient(gradient, lambda p: 0.1 * torch.ones_like(p), 3), (x, targets)
        ),
        "class_gradient": Sweep(
            a.class_gradient,
            (forward, x, targets),
            {"batch_size": 2},
            bad_params={"batch_size": [0], "targets": [torch.tensor([0, 1, 3, 0])]},
        ),
        "vanilla_gradient": Sweep(a.vanilla_gradient, (gradient, x, targets), accepts=OPERATOR),
        "gradient_x_input": Sweep(a.gradient_x_input, (gradient, x, targets), accepts=OPERATOR),
        "integrated_gradients": Sweep(
            a.integrated_gradients,
            (gradient, x, targets),
            {"n_steps": 4},
            bad_params={"n_steps": [0], "baseline": [torch.zeros(2, 2)]},
            accepts=OPERATOR,
        ),
        "deletion_auc": Sweep(a.deletion_auc, (curve,), width=False),
        "deletion_curve": Sweep(
            a.deletion_curve,
            (forward, x, maps, targets),
            {"steps": 4, "batch_size": 8},
            bad_params={"steps": [0], "fill": [torch.zeros(2, 2)], "batch_size": [0]},
        ),
        "expected_out_of_range_rate": Sweep(
            a.expected_out_of_range_rate, (x, sigma, lo, hi), bad_params={"sigma": [-sigma]}
        ),
        "gini": Sweep(a.gini, (maps,), width=False),
        "out_of_range_rate": Sweep(
            a.out_of_range_rate,
            (x, lo, hi),
            bad_params={"hi": [torch.tensor(-1.0)]},
            accepts={"samples:width": ANY_WIDTH},
        ),
        "as_forward": Sweep(a.as_forward, (model,)),
        "load_hf_classifier": Sweep(
            a.load_hf_classifier, (_saved_vit(),), bad_params={"name_or_path": [_EMPTY.name]}
        ),
        "pixel_bounds": Sweep(a.pixel_bounds, (processor,)),
        "load_digits_32": Sweep(a.load_digits_32, bad_params={"seed": [-1]}),
        "trained_digits_cnn": Sweep(
            a.trained_digits_cnn, kwargs={"epochs": 1}, bad_params={"seed": [-1], "epochs": [0]}
        ),
    }
