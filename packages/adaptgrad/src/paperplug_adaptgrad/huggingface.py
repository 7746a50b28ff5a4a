"""Hugging Face image classifiers by name or path, with the per-channel input bounds their processor implies."""

from __future__ import annotations

import os
from typing import Any

import torch

from paperplug.checks import check_type
from paperplug.extras import requires_extra


def pixel_bounds(processor: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-channel (lo, hi) of normalised pixels: ((0 − mean)/std, (1 − mean)/std) for pixels in [0, 1]."""
    if not getattr(processor, "do_normalize", True):
        return torch.tensor(0.0), torch.tensor(1.0)
    if not all(hasattr(processor, k) for k in ("image_mean", "image_std")):
        raise TypeError(
            "processor must be an image processor with image_mean and image_std, got "
            + type(processor).__name__
        )
    mean = torch.as_tensor(processor.image_mean, dtype=torch.float32)
    std = torch.as_tensor(processor.image_std, dtype=torch.float32)
    return (0.0 - mean) / std, (1.0 - mean) / std


def load_hf_classifier(
    name_or_path: str, **kwargs: Any
) -> tuple[torch.nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    """`AutoModelForImageClassification` in eval mode and the bounds of its processor's pixel values.

    Explain it with `AdaptGrad(bounds=bounds).explain(model, pixel_values)`; logits come from `.logits`.
    """
    check_type(name_or_path, "name_or_path", (str, os.PathLike), what="a model name or path")
    if os.path.isdir(name_or_path) and not os.path.isfile(
        os.path.join(name_or_path, "config.json")
    ):
        raise ValueError(
            f"name_or_path: the folder {name_or_path} holds no saved model (config.json)"
        )
    try:
        with requires_extra("paperplug-adaptgrad", "hf", "Hugging Face image classifiers"):
            from transformers import AutoImageProcessor, AutoModelForImageClassification
    except ImportError as exc:
        raise ImportError(
            "loading Hugging Face models needs `pip install paperplug-adaptgrad[hf]`"
        ) from exc
    model = AutoModelForImageClassification.from_pretrained(name_or_path, **kwargs).eval()
    processor = AutoImageProcessor.from_pretrained(name_or_path)
    return model, pixel_bounds(processor)
