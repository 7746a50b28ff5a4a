"""Stage 2, attention entropy (paper Eq. 3): H = -sum p log p over the normalised image-token attention."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from paperplug.checks import check_sequence, check_tensor, check_type

EPS = 1e-8  # the official code's log offset


def attention_entropy(
    attention: torch.Tensor | np.ndarray, *, relative: bool = False
) -> np.ndarray:
    """Entropy of the last axis after renormalising it to sum 1; `relative` divides by log N.

    `relative=True` makes layers and models with different image-token counts N comparable.
    """
    return _entropy(attention, "attention", relative)


def _entropy(attention: Any, name: str, relative: bool) -> np.ndarray:
    check_type(relative, "relative", bool)
    att = check_tensor(attention, name).double()
    if att.ndim < 1 or att.shape[-1] < 1:
        raise ValueError(f"{name} needs a last axis of at least one image token")
    if (att < 0).any():
        raise ValueError(f"{name}: attention weights must be non-negative")
    p = att / att.sum(-1, keepdim=True)
    h = -(p * torch.log(p + EPS)).sum(-1)
    if relative:
        n = att.shape[-1]
        h = h / math.log(n) if n > 1 else torch.zeros_like(h)
    return h.numpy()


def entropy_matrix(attentions: Sequence[torch.Tensor], *, relative: bool = False) -> np.ndarray:
    """(samples, layers) entropies from per-sample (layers, image tokens) attention; NaN -> column mean."""
    maps = check_sequence(attentions, "attentions", what="(layers, image tokens) attention maps")
    rows = [_entropy(a, f"attentions[{i}]", relative) for i, a in enumerate(maps)]
    if len({r.shape for r in rows}) > 1:
        raise ValueError(
            f"attentions must share one number of layers, got {[r.shape for r in rows]}"
        )
    E = np.stack(rows)
    if np.isnan(E).any():  # an all-zero row; the official code fills the column mean
        E = np.where(np.isnan(E), np.nanmean(E, axis=0, keepdims=True), E)
    return E
