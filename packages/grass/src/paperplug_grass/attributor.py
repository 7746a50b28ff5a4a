"""The influence attributor (paper §2): train features φ_i from a compressor (cached), the
eFIM preconditioner F = Φᵀ Φ / n with damping λ (chosen on validation LDS, never 0 by
default), scores τ(z, i) = φ_zᵀ (F + λI)⁻¹ φ_i, the TRAK-style variant (margin target,
train points weighted by 1 − p_i), averaged over checkpoints.

For the factored compressors (LoGra, FactGraSS) the eFIM is block-diagonal, one block F_l
per linear layer, each damped relative to its own scale, F_l + λ·(tr F_l / k_l) I: as the
official code's block-projected attributor (shipped in dattri) does; with a full F the
features of layers of very different scales share one λ."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from paperplug import Explanation
from paperplug_grass.compressors import KINDS, Compressor, check_k
from paperplug_grass.datamodeling import lds
from paperplug_grass.factored import FACTORED, FactoredCompressor
from paperplug_grass.gradients import (
    TARGETS,
    linear_factors,
    linear_layers,
    per_sample_gradients,
)

DAMPING_GRID = tuple(10.0**e for e in range(-7, 3))
PRECONDITIONERS = ("auto", "full", "block")
LEARNED = ("sm", "grass-sm")  # compressors fitted to a checkpoint's gradients


def _as_tensor(X: Any, dtype: torch.dtype) -> torch.Tensor:
    return torch.as_tensor(np.asarray(X.detach().cpu() if hasattr(X, "detach") else X), dtype=dtype)


def _check_features(kind: str, k: int, blowup: int, target: str) -> None:
    """A ValueError naming the first bad argument of a compressor over a model."""
    if kind not in KINDS + FACTORED:
        raise ValueError(f"kind must be one of {KINDS + FACTORED}, got {kind!r}")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    check_k(k)
    check_k(blowup, "blowup")


class GradientFeatures:
    """One compressor kind over a model: (B, k) features of (X, y) for the target."""

    def __init__(
        self,
        kind: str = "factgrass",
        k: int = 1024,
        *,
        blowup: int = 4,
        seed: int = 0,
        target: str = "margin",
        layers: Sequence[str] | None = None,
        batch_size: int = 128,
    ) -> None:
        _check_features(kind, k, blowup, target)
        self.kind, self.k, self.blowup, self.seed = kind, k, blowup, seed
        self.target, self.layers, self.batch_size = target, layers, batch_size
        self.seconds = 0.0  # compression time, for throughput

    def _fit(self, model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> None:
        if self.kind in FACTORED:
            names = list(self.layers) if self.layers is not None else linear_layers(model)
            if not names:
                raise ValueError(f"{self.kind} needs linear layers; the model has none")
            modules = dict(model.named_modules())
            shapes = [(modules[n].out_features, modules[n].in_features + 1) for n in names]
            self.names = names
            self.compressor: Any = FactoredCompressor(
                self.kind, self.k, blowup=self.blowup, seed=self.seed
            ).fit(shapes)
        else:
            p = sum(q.numel() for q in model.parameters() if q.requires_grad)
            sample = None
            if self.kind in ("sm", "grass-sm"):
                sample = per_sample_gradients(model, X[:256], y[:256], self.target)
            self.compressor = Compressor(self.kind, self.k, blowup=self.blowup, seed=self.seed)
            self.compressor.fit(p, sample)

    def __call__(self, model: nn.Module, X: Any, y: Any) -> torch.Tensor:
        dtype = next(model.parameters()).dtype
        X, y = _as_tensor(X, dtype), _as_tensor(y, torch.long)
        if len(X) != len(y):
            raise ValueError(f"X and y differ in length: {len(X)} and {len(y)}")
        if not hasattr(self, "compressor"):
            self._fit(model, X, y)
        parts = []
        start = time.process_time()
        was = model.training
        model.eval()  # the caller's mode is restored below
        try:
            self._batches(model, X, y, parts)
        finally:
            model.train(was)
        self.seconds += time.process_time() - start
        return torch.cat(parts).double()

    def _batches(self, model: nn.Module, X: torch.Tensor, y: torch.Tensor, parts: list) -> None:
        for i in range(0, len(X), self.batch_size):
            xb, yb = X[i : i + self.batch_size], y[i : i + self.batch_size]
            if self.kind in FACTORED:
                parts.append(
                    self.compressor.compress(linear_factors(model, xb, yb, self.target, self.names))
                )
            else:
                parts.append(
                    self.compressor.compress(per_sample_gradients(model, xb, yb, self.target))
                )


class InfluenceAttributor:
    """The Explainer component. `cache(checkpoints, X_train, y_train)`, then
    `attribute(X_test, y_test) → (n_train, n_test)` scores; `choose_damping(...)` picks λ on
    validation points with subset-trained ground truth. `explain(...)` does all three.

    preconditioner: "full" (one F over all k features, λ absolute), "block" (one F_l per
    linear layer, λ relative to its mean eigenvalue; factored kinds only) or "auto" (block for
    LoGra / FactGraSS, as the official code, full for the rest)."""

    def __init__(
        self,
        kind: str = "factgrass",
        k: int = 1024,
        *,
        blowup: int = 4,
        seed: int = 0,
        target: str = "margin",
        damping: float | None = None,
        trak_weighting: bool = True,
        preconditioner: str = "auto",
        layers: Sequence[str] | None = None,
        batch_size: int = 128,
    ) -> None:
        if preconditioner not in PRECONDITIONERS:
            raise ValueError(
                f"preconditioner must be one of {PRECONDITIONERS}, got {preconditioner!r}"
            )
        if preconditioner == "block" and kind not in FACTORED:
            raise ValueError(
                f"preconditioner='block' needs a factored kind {FACTORED}, got {kind!r}"
            )
        if damping is not None and not damping > 0:
            raise ValueError(
                f"damping must be > 0 (λ = 0 is singular when k >= n), got {damping!r}"
            )
        _check_features(kind, k, blowup, target)  # at the door, not at cache
        self.kind, self.k, self.blowup, self.seed, self.target = kind, k, blowup, seed, target
        self.damping, self.trak_weighting, self.layers = damping, trak_weighting, layers
        self.batch_size = batch_size
        self.preconditioner = preconditioner
        if preconditioner == "auto":
            self.preconditioner = "block" if kind in FACTORED else "full"

    def cache(
        self, checkpoints: nn.Module | Sequence[nn.Module], X: Any, y: Any
    ) -> InfluenceAttributor:
        models = [checkpoints] if isinstance(checkpoints, nn.Module) else list(checkpoints)
        if not models:
            raise ValueError("give at least one checkpoint")
        self.models_ = models

        def features() -> GradientFeatures:
            return GradientFeatures(
                self.kind,
                self.k,
                blowup=self.blowup,
                seed=self.seed,
                target=self.target,
                layers=self.layers,
                batch_size=self.batch_size,
            )

        if self.kind in LEARNED:  # a selective mask is learned on each checkpoint's gradients
            self.features_ = [features() for _ in models]
        else:  # a random projection is the same for every checkpoint: drawn once
            shapes = [[tuple(q.shape) for q in m.parameters()] for m in models]
            if any(s != shapes[0] for s in shapes[1:]):
                raise ValueError("checkpoints must share one architecture (parameter shapes)")
            self.features_ = [features()] * len(models)
        self.train_ = []
        for model, feats in zip(self.models_, self.features_, strict=True):
            phi = feats(model, X, y)
            weight = torch.ones(len(phi), dtype=torch.double)
            if self.trak_weighting:
                was = model.training
                with torch.no_grad():
                    model.eval()
                    logits = model(_as_tensor(X, next(model.parameters()).dtype))
                    model.train(was)
                    p = torch.softmax(logits.double(), -1).gather(
                        -1, _as_tensor(y, torch.long).view(-1, 1)
                    )
                weight = (1 - p.squeeze(-1)).double()
            sizes = feats.compressor.blocks if self.preconditioner == "block" else [phi.shape[1]]
            blocks, start = [], 0
            for size in sizes:
                part = phi[:, start : start + size]
                vals, vecs = torch.linalg.eigh(part.T @ part / len(part))
                vals = vals.clamp_min(0)
                # λ's unit: 1 for the full F, the block's mean eigenvalue tr(F_l)/k_l per block
                unit = vals.mean().clamp_min(1e-30) if self.preconditioner == "block" else 1.0
                # kept in F's eigenbasis: each λ then costs one (n, k) × (k, m) product
                blocks.append((slice(start, start + size), part @ vecs, vals, vecs, unit))
                start += size
            self.train_.append((blocks, weight))
        return self

    @property
    def compression_seconds(self) -> float:
        unique = {id(f): f for f in getattr(self, "features_", [])}
        return sum(f.seconds for f in unique.values())

    def _test_features(self, X: Any, y: Any) -> list[torch.Tensor]:
        if not hasattr(self, "train_"):
            raise RuntimeError("call cache(checkpoints, X_train, y_train) first")
        return [
            feats(model, X, y) for model, feats in zip(self.models_, self.features_, strict=True)
        ]

    def _scores(self, tests: list[torch.Tensor], lam: float) -> np.ndarray:
        if not lam > 0:
            raise ValueError(f"damping must be > 0, got {lam!r}")
        total = None
        for test, (blocks, weight) in zip(tests, self.train_, strict=True):
            scores = sum(
                (rotated / (vals + lam * unit)) @ (test[:, cols] @ vecs).T
                for cols, rotated, vals, vecs, unit in blocks
            ) * weight.view(-1, 1)
            total = scores if total is None else total + scores
        return (total / len(tests)).numpy()

    def attribute(self, X: Any, y: Any, damping: float | None = None) -> np.ndarray:
        """(n_train, n_test) influence scores, averaged over the checkpoints."""
        lam = (
            damping if damping is not None else (self.damping if self.damping is not None else 1e-3)
        )
        return self._scores(self._test_features(X, y), lam)

    def choose_damping(
        self,
        X_val: Any,
        y_val: Any,
        subsets: np.ndarray,
        values: np.ndarray,
        grid: Sequence[float] = DAMPING_GRID,
    ) -> float:
        """λ with the best LDS on validation points; stored as `damping` and used from then on."""
        tests = self._test_features(X_val, y_val)
        results = {lam: lds(self._scores(tests, lam), subsets, values)[0] for lam in grid}
        self.damping_scores_ = results
        self.damping = max(results, key=lambda lam: (results[lam], -lam))
        return self.damping

    def explain(self, model: Any, inputs: Any, *, target: Any = None, **kw: Any) -> Explanation:
        """model: a checkpoint or a list of them; inputs: (X_test, y_test); train=(X, y): the
        data to attribute to. `target` is unused (the target function is set at construction)."""
        if "train" not in kw:
            raise ValueError("explain needs train=(X_train, y_train): the data to attribute to")
        X_tr, y_tr = kw["train"]
        X_te, y_te = inputs
        self.cache(model, X_tr, y_tr)
        return Explanation(
            self.attribute(X_te, y_te),
            kind="data",
            meta={
                "kind": self.kind,
                "k": self.k,
                "damping": self.damping,
                "preconditioner": self.preconditioner,
            },
        )
