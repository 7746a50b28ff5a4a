"""dattri 0.3.0's LoGra and FactGraSS attributors on our target, for the benchmark only.

dattri's block-projected influence attributor (`BlockProjectedIFAttributor`, which its
`LoGraAttributor` / `FactGraSSAttributor` configure) differs from ours in ways this adapter
bridges, so that both attribute the same function with the same k:

- its test-gradient path hard-codes `cross_entropy(model(x), y)`. The wrapped model below
  reads the label from the input and returns the two logits (0, m) with m TRAK's margin, and
  every query label is 1: then ∇ cross_entropy = −(1 − p_z) ∇m_z, the margin gradient times a
  negative per-test-point constant; the training loss is −mean margin (∇ = −∇m_i), so the
  score keeps its sign and each test point's scores are scaled by (1 − p_z) > 0, which no
  per-test-point Spearman (the LDS) can see. The train weighting 1 − p_i of TRAK, which dattri
  lacks, is applied to the scores afterwards, exactly as our attributor applies it;
- its setup forward pass takes `inputs[0]` of the first batch, so inputs are fed as (B, 1, d);
- its proj_dim is per layer: we give each layer k // layers, and the factor sizes our
  compressors use (LoGra ⌊√k_l⌋ per factor; FactGraSS round(√(4 k_l)) per factor, masked,
  then a second stage to k_l) through the base class, which has no perfect-square rule;
- one checkpoint per attributor: one is built per checkpoint and the scores averaged;
- its damping is relative (λ · tr(F_l)/k_l added to each layer's block F_l of the eFIM) and
  None by default: the same grid of λ values is searched on the validation points;
- on the CPU its FactGraSS second stage is a dense Gaussian projection (its SJLT is CUDA-only).
"""

from __future__ import annotations

import math
import os
import tempfile
import time

import numpy as np
import torch
from paperplug_grass.gradients import target_values
from torch import nn


class MarginAsLoss(nn.Module):
    """(B, 1, d + 1) inputs whose last column is the label → the logits (0, margin)."""

    def __init__(self, net: nn.Module, d: int) -> None:
        super().__init__()
        self.net, self.d = net, d

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        flat = inputs.reshape(-1, self.d + 1)
        margin = target_values(self.net(flat[:, : self.d]), flat[:, self.d].long())
        return torch.stack([torch.zeros_like(margin), margin], -1)


def _train_loss(model: nn.Module, batch: tuple, device: str) -> torch.Tensor:
    inputs, _ = batch
    return -model(inputs.to(device))[:, 1].mean()


def loader(X: np.ndarray, y: np.ndarray, batch_size: int = 100):
    from torch.utils.data import DataLoader, TensorDataset

    inputs = np.concatenate([X, y.reshape(-1, 1).astype(X.dtype)], 1)[:, None, :]
    data = TensorDataset(torch.as_tensor(inputs), torch.ones(len(X), dtype=torch.long))
    return DataLoader(data, batch_size=batch_size, shuffle=False)


def configs(kind: str, k: int, layers: int, seed: int, blowup: int = 4) -> tuple[dict, dict]:
    """(sparsifier_kwargs, projector_kwargs) as dattri's wrappers set them, at k_l = k // layers
    per layer and with the projection seed passed through."""
    per = k // layers
    if kind == "logra":
        sparsifier = {"proj_dim": max(1, math.isqrt(per)), "proj_type": "normal"}
        projector = {"proj_dim": -1, "proj_type": "identity"}
    elif kind == "factgrass":
        sparsifier = {"proj_dim": round(math.sqrt(blowup * per)), "proj_type": "random_mask"}
        projector = {"proj_dim": per, "proj_type": "normal"}  # dattri's CPU choice
    else:
        raise ValueError(f"kind must be 'logra' or 'factgrass', got {kind!r}")
    common = {"device": "cpu", "proj_max_batch_size": 64}
    return (
        {**common, **sparsifier, "proj_seed": seed},
        {**common, **projector, "proj_seed": seed},
    )


def attributor(kind: str, checkpoint: nn.Module, k: int, seed: int = 0, damping: float = 1e-3):
    """dattri's block-projected attributor configured as its `kind` wrapper, on one checkpoint
    wrapped in `MarginAsLoss`."""
    from dattri.algorithm.block_projected_if.block_projected_if import (
        BlockProjectedIFAttributor,
    )
    from dattri.task import AttributionTask

    d = checkpoint[0].in_features
    model = MarginAsLoss(checkpoint, d).eval()
    task = AttributionTask(loss_func=_train_loss, model=model, checkpoints=model.state_dict())
    layers = sum(isinstance(m, nn.Linear) for m in model.modules())
    sparsifier, projector = configs(kind, k, layers, seed)
    return BlockProjectedIFAttributor(
        task=task,
        hessian="eFIM",
        damping=damping,
        device="cpu",
        sparsifier_kwargs=sparsifier,
        projector_kwargs=projector,
        offload="cpu",
    )


def trak_weight(checkpoint: nn.Module, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        p = torch.softmax(checkpoint(torch.as_tensor(X)).double(), -1)
    return 1 - p[torch.arange(len(y)), torch.as_tensor(y, dtype=torch.long)].numpy()


def scores_per_damping(
    kind: str, checkpoints, data, k: int, grid, seed: int = 0
) -> tuple[dict, float]:
    """{λ: (n_train, n_val + n_test) scores averaged over checkpoints} and the CPU seconds of
    caching the training gradients (forward, backward, compression, eFIM)."""
    Xq = np.concatenate([data.X_val, data.X_test])
    yq = np.concatenate([data.y_val, data.y_test])
    total: dict = {lam: 0.0 for lam in grid}
    seconds = 0.0
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # dattri writes its metadata file into the working directory
        try:
            for ck in checkpoints:
                att = attributor(kind, ck, k, seed)
                train = loader(data.X, data.y)
                start = time.process_time()
                att.cache(train)
                seconds += time.process_time() - start
                weight = trak_weight(ck, data.X, data.y).reshape(-1, 1)
                for lam in grid:
                    att.compute_preconditioners(lam)
                    att.compute_ifvp()
                    s = att.attribute(train, loader(Xq, yq)).double().numpy()
                    total[lam] = total[lam] + s * weight / len(checkpoints)
        finally:
            os.chdir(cwd)
    return total, seconds


def compression_timer(kind: str, model: nn.Module, X, y, k: int, batch: int = 16):
    """A function that returns the CPU seconds of one hooked forward/backward/compression pass
    of dattri over (X, y) in batches of `batch`; one untimed batch first builds the projections
    and compiles `Compressor.forward` with torch.compile."""
    att = attributor(kind, model, k)
    warm = loader(X[:batch], y[:batch], batch)
    att._setup_compressors(warm)
    att._compute_test_gradients(warm)
    timed = loader(X, y, batch)

    def run() -> float:
        start = time.process_time()
        att._compute_test_gradients(timed)
        return time.process_time() - start

    return run


def compression_seconds(kind: str, model: nn.Module, X, y, k: int, batch: int = 16) -> float:
    """CPU seconds of one timed pass of `compression_timer`."""
    return compression_timer(kind, model, X, y, k, batch)()
