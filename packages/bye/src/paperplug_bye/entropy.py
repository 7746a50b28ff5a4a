"""Stage 2, attention entropy (paper Eq. 3): H = -sum p log p over the normalised image-token attention."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

EPS = 1e-8  # the official code's log offset


def attention_entropy(
    attention: torch.Tensor | np.ndarray, *, relative: bool = False
) -> np.ndarray:
    """Entropy of the last axis after renormalising it to sum 1; `relative` divides by log N.

    `relative=True` makes layers and models with different image-token counts N comparable.
    """
    att = torch.as_tensor(attention, dtype=torch.float64)
    if att.ndim < 1 or att.shape[-1] < 1:
        raise ValueError("attention needs a last axis of at least one image token")
    if not torch.isfinite(att).all() or (att < 0).any():
        raise ValueError("attention weights must be finite and non-negative")
    p = att / att.sum(-1, keepdim=True)
    h = -(p * torch.log(p + EPS)).sum(-1)
    if relative:
        n = att.shape[-1]
        h = h / math.log(n) if n > 1 else torch.zeros_like(h)
    return h.numpy()


def entropy_matrix(attentions: Sequence[torch.Tensor], *, relative: bool = False) -> np.ndarray:
    """(samples, layers) entropies from per-sample (layers, image tokens) attention; NaN -> column mean."""
    if len(attentions) == 0:
        raise ValueError("no attention maps given")
    E = np.stack([attention_entropy(a, relative=relative) for a in attentions])
    if np.isnan(E).any():  # an all-zero row; the official code fills the column mean
        E = np.where(np.isnan(E), np.nanmean(E, axis=0, keepdims=True), E)
    return E
