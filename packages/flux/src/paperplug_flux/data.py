"""Per-client datasets: numpy arrays or torch datasets, checked at the door.

A federated client holds its own `(X, y)`; FLUX needs nothing else from it (§3). Inputs are
copied into float32/int64 tensors, so the caller's arrays are never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch


def _as_pair(data: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(data, torch.utils.data.Dataset) and not isinstance(data, tuple | list):
        items = [data[i] for i in range(len(data))]  # type: ignore[arg-type]
        if not items:
            raise ValueError(f"{what} is an empty dataset")
        xs = np.stack([np.asarray(x, dtype=np.float32) for x, _ in items])
        ys = np.asarray([int(y) for _, y in items])
        return xs, ys
    if not isinstance(data, tuple | list) or len(data) != 2:
        raise TypeError(
            f"{what} must be an (X, y) pair or a torch Dataset, got {type(data).__name__}"
        )
    x, y = (v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else v for v in data)
    return np.asarray(x), np.asarray(y)


def client_tensors(
    data: Any, what: str = "client", n_classes: int | None = None, *, labelled: bool = True
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One client's data as (float32 X, int64 y) tensors: an (X, y) pair of arrays or tensors,
    or a torch Dataset of (x, label) items. `labelled=False` takes a bare X (unseen clients)."""
    if labelled:
        x, y = _as_pair(data, what)
    else:
        x = data.detach().cpu().numpy() if isinstance(data, torch.Tensor) else np.asarray(data)
        y = None
    if x.dtype == object or not np.issubdtype(x.dtype, np.number):
        raise TypeError(f"{what}: X must be numeric, got dtype {x.dtype}")
    if x.ndim < 2 or len(x) == 0:
        raise ValueError(
            f"{what}: X must hold at least one sample of shape (n, ...), got {x.shape}"
        )
    if not np.isfinite(x).all():
        raise ValueError(f"{what}: X holds NaN or infinite values")
    xt = torch.tensor(x, dtype=torch.float32)
    if y is None:
        return xt, None
    if y.ndim != 1 or len(y) != len(x):
        raise ValueError(
            f"{what}: y must be 1-D with one label per sample ({len(x)}), got {y.shape}"
        )
    whole = np.issubdtype(y.dtype, np.floating) and bool(np.all(np.mod(y, 1) == 0))
    if not np.issubdtype(y.dtype, np.integer) and not whole:
        raise TypeError(f"{what}: y must hold integer class labels, got dtype {y.dtype}")
    if y.min() < 0 or (n_classes is not None and y.max() >= n_classes):
        raise ValueError(f"{what}: labels must lie in [0, {n_classes}), got [{y.min()}, {y.max()}]")
    return xt, torch.tensor(y.astype(np.int64))


def federated_tensors(
    datasets: Sequence[Any], what: str, n_classes: int | None = None
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Every client's (X, y) as tensors, each checked; at least two clients."""
    if isinstance(datasets, tuple | np.ndarray | torch.Tensor) or not isinstance(
        datasets, Sequence
    ):
        raise TypeError(f"{what} must be a list with one (X, y) or Dataset per client")
    if len(datasets) < 2:
        raise ValueError(f"{what} needs at least two clients, got {len(datasets)}")
    out = [client_tensors(d, f"{what}[{i}]", n_classes) for i, d in enumerate(datasets)]
    shapes = {tuple(x.shape[1:]) for x, _ in out}
    if len(shapes) != 1:
        raise ValueError(
            f"{what}: every client's samples must share one shape, got {sorted(shapes)}"
        )
    return out  # type: ignore[return-value]
