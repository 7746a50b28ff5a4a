"""Per-client datasets: numpy arrays, tensors or torch datasets, checked at the door.

A federated client holds its own `(X, y)`; FLUX needs nothing else from it (§3). Inputs are
copied into float32/int64 tensors, so the caller's arrays are never touched. Every message
names the argument as the caller wrote it (`train_sets[3][0]` is client 3's X).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from paperplug.checks import check_array, check_consistent_length, check_sequence

Data = tuple[torch.Tensor, torch.Tensor]


def samples(x: Any, name: str, *, input_shape: tuple[int, ...] | None = None) -> torch.Tensor:
    """One client's inputs as a float32 tensor of shape (n, ...): finite, at least one
    sample, and each sample of `input_shape` when given (the shape the model was fitted on)."""
    arr = check_array(x, name, dtype="float")
    if arr.ndim < 2:
        raise ValueError(
            f"{name} must hold samples of shape (n, ...) with n >= 1, got shape {arr.shape}"
        )
    if input_shape is not None and tuple(arr.shape[1:]) != tuple(input_shape):
        want = ", ".join(str(d) for d in input_shape)
        raise ValueError(
            f"{name} must have samples of shape ({want}) like the training clients', got "
            f"{tuple(arr.shape[1:])}"
        )
    return torch.tensor(arr, dtype=torch.float32)


def labels(y: Any, name: str, n_classes: int | None = None) -> torch.Tensor:
    """Integer class labels as an int64 tensor, 1-D, in [0, n_classes)."""
    arr = check_array(y, name, dtype="int", ndim=1)
    if arr.min() < 0 or (n_classes is not None and arr.max() >= n_classes):
        raise ValueError(
            f"{name} must hold labels in [0, {n_classes}), got [{arr.min()}, {arr.max()}]"
        )
    return torch.tensor(arr, dtype=torch.int64)


def _pair(data: Any, name: str) -> tuple[Any, Any, str, str]:
    """(X, y) and their names from an (X, y) pair or a torch Dataset of (x, label) items."""
    if isinstance(data, torch.utils.data.Dataset) and not isinstance(data, tuple | list):
        items = [data[i] for i in range(len(data))]  # type: ignore[arg-type]
        if not items:
            raise ValueError(f"{name} is an empty dataset")
        xs = np.stack([np.asarray(x, dtype=np.float32) for x, _ in items])
        return xs, np.asarray([int(y) for _, y in items]), name, name
    if not isinstance(data, tuple | list) or len(data) != 2:
        raise TypeError(
            f"{name} must be an (X, y) pair or a torch Dataset, got {type(data).__name__}"
        )
    return data[0], data[1], f"{name}[0]", f"{name}[1]"


def client_tensors(
    data: Any,
    name: str = "client",
    n_classes: int | None = None,
    *,
    input_shape: tuple[int, ...] | None = None,
) -> Data:
    """One client's labelled data as (float32 X, int64 y): an (X, y) pair of arrays or tensors,
    or a torch Dataset of (x, label) items."""
    x, y, x_name, y_name = _pair(data, name)
    xt = samples(x, x_name, input_shape=input_shape)
    yt = labels(y, y_name, n_classes)
    check_consistent_length(**{x_name: xt, y_name: yt})
    return xt, yt


def federated_tensors(
    datasets: Sequence[Any],
    name: str,
    n_classes: int | None = None,
    *,
    input_shape: tuple[int, ...] | None = None,
) -> list[Data]:
    """Every client's (X, y) as tensors, each checked; at least two clients, whose samples
    share one shape (`input_shape` when given)."""
    if isinstance(datasets, tuple | np.ndarray | torch.Tensor):
        raise TypeError(f"{name} must be a list with one (X, y) or Dataset per client")
    items = check_sequence(
        datasets, name, min_len=2, what="(X, y) pairs or Datasets, one per client"
    )
    out = [
        client_tensors(d, f"{name}[{i}]", n_classes, input_shape=input_shape)
        for i, d in enumerate(items)
    ]
    shapes = {tuple(x.shape[1:]) for x, _ in out}
    if len(shapes) != 1:
        raise ValueError(
            f"{name}: every client's samples must share one shape, got {sorted(shapes)}"
        )
    return out
