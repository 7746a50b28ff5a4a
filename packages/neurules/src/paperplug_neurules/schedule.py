"""Stage 4: the training schedule — heads frozen for the first half, then temperatures annealed."""

from __future__ import annotations


def annealed(start: float, epoch: int, n_epochs: int, factor: float) -> float:
    """Constant for the first half, then linear decay to start/factor at the last epoch."""
    half = n_epochs // 2
    if epoch < half or n_epochs - half <= 1:
        return start if epoch < half else start / factor
    progress = (epoch - half) / (n_epochs - half - 1)
    return start * (1 - progress) + start / factor * progress


def heads_frozen(epoch: int, n_epochs: int) -> bool:
    """Class heads H get no update during the first half, so rules form before labels attach."""
    return epoch < n_epochs // 2
