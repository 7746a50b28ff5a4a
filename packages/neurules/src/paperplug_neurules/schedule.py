"""Stage 4: the training schedule — temperatures annealed over the second half, class heads
optionally frozen for a first part, and enough optimiser steps on small data."""

from __future__ import annotations

import math

from paperplug.checks import check_scalar


def _check_epoch(epoch: int, n_epochs: int) -> None:
    check_scalar(n_epochs, "n_epochs", "int", low=1)
    check_scalar(epoch, "epoch", "int", low=0, high=n_epochs - 1)


def annealed(start: float, epoch: int, n_epochs: int, factor: float) -> float:
    """Constant for the first half, then linear decay to start/factor at the last epoch."""
    check_scalar(start, "start", low=0, inclusive="neither")
    _check_epoch(epoch, n_epochs)
    check_scalar(factor, "factor", low=1)
    half = n_epochs // 2
    if epoch < half or n_epochs - half <= 1:
        return start if epoch < half else start / factor
    progress = (epoch - half) / (n_epochs - half - 1)
    return start * (1 - progress) + start / factor * progress


def heads_frozen(epoch: int, n_epochs: int, fraction: float = 0.5) -> bool:
    """Class heads H get no update during the first `fraction` of the epochs (the official code:
    half, so rules form before labels attach)."""
    _check_epoch(epoch, n_epochs)
    check_scalar(fraction, "fraction", low=0, high=1)
    return epoch < math.floor(n_epochs * fraction)


def batch_rows(n_rows: int, n_epochs: int, min_steps: int = 1000, max_rows: int = 2048) -> int:
    """Rows per batch so that `n_epochs` passes make at least `min_steps` optimiser steps, in
    batches of equal size (no stray small last batch), at most `max_rows` (the paper's batch):
    the official 500 epochs of 2048-row batches make many steps on the paper's large datasets
    but only 500 on a small table, too few to learn."""
    for name, value in (
        ("n_rows", n_rows),
        ("n_epochs", n_epochs),
        ("min_steps", min_steps),
        ("max_rows", max_rows),
    ):
        check_scalar(value, name, "int", low=1)
    batches = max(math.ceil(min_steps / n_epochs), math.ceil(n_rows / max_rows))
    return max(1, math.ceil(n_rows / batches))
