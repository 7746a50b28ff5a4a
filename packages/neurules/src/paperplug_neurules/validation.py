"""Checks shared by the stages' public functions: row weights, class indices, a generator."""

from __future__ import annotations

from typing import Any

import torch

from paperplug.checks import check_data, check_type


def check_weight(weight: Any, name: str, n_rows: int) -> Any:
    """`weight` (tensor or array) as n_rows non-negative finite row weights, not all zero."""
    w = check_data(weight, name, ndim=1, shape=(n_rows,))
    if (w < 0).any() or not (w > 0).any():
        raise ValueError(f"{name} must be non-negative with at least one positive weight")
    return w


def check_class_indices(y: Any, name: str, n_rows: int, n_classes: int) -> Any:
    """`y` (tensor or array) as n_rows class indices in [0, n_classes)."""
    labels = check_data(y, name, dtype="int", ndim=1, shape=(n_rows,))
    if labels.min() < 0 or labels.max() >= n_classes:
        low, high = int(labels.min()), int(labels.max())
        raise ValueError(f"{name} must hold class indices in [0, {n_classes}), got [{low}, {high}]")
    return labels


def check_generator(generator: Any, name: str = "generator") -> torch.Generator:
    """`generator` if it is a torch.Generator, else a TypeError naming `name`."""
    return check_type(generator, name, torch.Generator)
