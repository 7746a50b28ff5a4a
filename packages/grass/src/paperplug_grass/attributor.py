"""The influence attributor (paper §2): train features φ_i from a compressor (cached), the
eFIM preconditioner F = Φᵀ Φ / n with damping λ (chosen on validation LDS, never 0 by
default), scores τ(z, i) = φ_zᵀ (F + λI)⁻¹ φ_i, the TRAK-style variant (margin target,
train points weighted by 1 − p_i), averaged over checkpoints.

For the factored compressors (LoGra, FactGraSS) the eFIM is block-diagonal, one block F_l
per linear or conv layer, each damped relative to its own scale, F_l + λ·(tr F_l / k_l) I: as the
official code's block-projected attributor (shipped in dattri) does; with a full F the
features of layers of very different scales share one λ."""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from paperplug import Explanation
from paperplug.checks import (
    check_choice,
    check_is_fitted,
    check_scalar,
    check_sequence,
    check_type,
)
from paperplug_grass.compressors import KINDS, Compressor
from paperplug_grass.datamodeling import lds
from paperplug_grass.factored import FACTORED, FactoredCompressor
from paperplug_grass.gradients import (
    TARGETS,
    factor_shape,
    factored_layers,
    idle_layers,
    labelled_data,
    layer_factors,
    per_sample_gradients,
    refusal,
)

DAMPING_GRID = tuple(10.0**e for e in range(-7, 3))
PRECONDITIONERS = ("auto", "full", "block")
LEARNED = ("sm", "grass-sm")  # compressors fitted to a checkpoint's gradients


def checkpoint_list(value: Any, name: str = "checkpoints") -> list[nn.Module]:
    """A checkpoint or a list of them (one architecture) as a list of torch modules."""
    check_type(value, name, (nn.Module, list, tuple), what="a torch module or a list of them")
    models = [value] if isinstance(value, nn.Module) else check_sequence(value, name, nn.Module)
    shapes = [[tuple(q.shape) for q in m.parameters()] for m in models]
    if not shapes[0]:
        raise ValueError(f"{name} has no parameters to attribute through")
    if any(s != shapes[0] for s in shapes[1:]):
        raise ValueError(f"{name} must share one architecture (parameter shapes)")
    return models


def coverage(
    model: nn.Module, names: Sequence[str], idle: Sequence[str] = ()
) -> tuple[int, int, list[str]]:
    """(trainable parameters the layers `names` hold, all trainable parameters, each module
    holding the others as "name (why; count)"); `idle`: layers left out as their forward does
    not run."""
    modules = dict(model.named_modules())
    covered = {id(q) for n in names for q in modules[n].parameters()}
    left: list[str] = []
    total = missing = 0
    for name, module in modules.items():
        own = [q for q in module.parameters(recurse=False) if q.requires_grad]
        total += sum(q.numel() for q in own)
        count = sum(q.numel() for q in own if id(q) not in covered)
        if count:
            missing += count
            why = refusal(module) or "not in layers"
            if name in idle:
                why = "its forward does not run: the parent uses its weight directly"
            left.append(f"{name} ({why}; {count:,})")
    return total - missing, total, left


def _warn_uncovered(model: nn.Module, kind: str, names: Sequence[str], idle: Sequence[str]) -> None:
    """The factored kinds take nn.Linear and nn.Conv2d layers (a ⊗ δ): name every module whose
    trainable parameters they leave out (norms, embeddings, grouped convs), with the share."""
    covered, total, left = coverage(model, names, idle)
    if left:
        warnings.warn(
            f"{kind} covers {covered:,} of {total:,} trainable parameters: it factors the "
            f"gradients of nn.Linear and nn.Conv2d layers only and leaves out {', '.join(left)}; "
            "use a non-factored kind ('grass', 'sjlt', 'gauss') to cover every parameter, or "
            "pass layers=[...] to say the factored layers are meant",
            UserWarning,
            stacklevel=4,
        )


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
        self.kind = check_choice(kind, "kind", KINDS + FACTORED)
        self.k = check_scalar(k, "k", "int", low=1)
        self.blowup = check_scalar(blowup, "blowup", "int", low=1)
        self.seed = check_scalar(seed, "seed", "int", low=0)
        self.target = check_choice(target, "target", TARGETS)
        self.layers = None if layers is None else check_sequence(layers, "layers", str)
        self.batch_size = check_scalar(batch_size, "batch_size", "int", low=1)
        self.seconds = 0.0  # compression time, for throughput

    def _fit(self, model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> None:
        if self.kind in FACTORED:
            names, idle = self.layers, []
            if names is None:  # every linear and conv layer whose forward runs
                names = factored_layers(model)
                was = model.training
                model.eval()
                try:
                    idle = idle_layers(model, X[:1], names)
                finally:
                    model.train(was)
                names = [n for n in names if n not in idle]
            if not names:
                raise ValueError(f"{self.kind} needs linear or conv layers; the model has none")
            modules = dict(model.named_modules())
            for i, name in enumerate(names):
                why = refusal(modules[name]) if name in modules else "no module of the model"
                if why is not None:
                    raise ValueError(
                        f"layers[{i}] = {name!r} is {why}; the layers {self.kind} can factor: "
                        f"{factored_layers(model)} (or use a non-factored kind: 'grass', 'sjlt')"
                    )
            if self.layers is None:
                _warn_uncovered(model, self.kind, names, idle)
            shapes = [factor_shape(modules[n]) for n in names]
            self.names = names
            self.parameters_covered = coverage(model, names)[0]
            self.compressor: Any = FactoredCompressor(
                self.kind, self.k, blowup=self.blowup, seed=self.seed
            ).fit(shapes)
        else:
            p = sum(q.numel() for q in model.parameters() if q.requires_grad)
            self.parameters_covered = p
            sample = None
            if self.kind in ("sm", "grass-sm"):
                sample = per_sample_gradients(model, X[:256], y[:256], self.target)
            self.compressor = Compressor(self.kind, self.k, blowup=self.blowup, seed=self.seed)
            self.compressor.fit(p, sample)

    def __call__(self, model: nn.Module, X: Any, y: Any) -> torch.Tensor:
        X, y = labelled_data(model, X, y)
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
        phi = torch.cat(parts).double()
        if not bool(torch.isfinite(phi).all()):
            raise ValueError("model gives non-finite gradients on these data (NaN weights?)")
        return phi

    def _batches(self, model: nn.Module, X: torch.Tensor, y: torch.Tensor, parts: list) -> None:
        for i in range(0, len(X), self.batch_size):
            xb, yb = X[i : i + self.batch_size], y[i : i + self.batch_size]
            if self.kind in FACTORED:
                parts.append(
                    self.compressor.compress(
                        layer_factors(model, xb, yb, self.target, self.names, self.compressor.maps),
                        reduced=True,
                    )
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
    linear or conv layer, λ relative to its mean eigenvalue; factored kinds only) or "auto" (block for
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
        self.kind, self.k, self.blowup, self.seed, self.target = kind, k, blowup, seed, target
        self.layers, self.batch_size = layers, batch_size
        self._features()  # every setting checked at the door, not at cache
        check_choice(preconditioner, "preconditioner", PRECONDITIONERS)
        if preconditioner == "block" and kind not in FACTORED:
            raise ValueError(
                f"preconditioner='block' needs a factored kind {FACTORED}, got {kind!r}"
            )
        # λ = 0 is singular when k >= n
        self.damping = check_scalar(damping, "damping", low=0, inclusive="neither", allow_none=True)
        self.trak_weighting = check_type(trak_weighting, "trak_weighting", bool)
        self.preconditioner = preconditioner
        if preconditioner == "auto":
            self.preconditioner = "block" if kind in FACTORED else "full"

    def cache(
        self, checkpoints: nn.Module | Sequence[nn.Module], X: Any, y: Any
    ) -> InfluenceAttributor:
        return self._cache(checkpoint_list(checkpoints), X, y, ("X", "y"))

    def _features(self) -> GradientFeatures:
        return GradientFeatures(self.kind, self.k, blowup=self.blowup, seed=self.seed,
                                target=self.target, layers=self.layers,
                                batch_size=self.batch_size)  # fmt: skip

    def _cache(
        self, models: list[nn.Module], X: Any, y: Any, names: tuple[str, str]
    ) -> InfluenceAttributor:
        X, y = labelled_data(models[0], X, y, names)
        self.models_ = models
        if self.kind in LEARNED:  # a selective mask is learned on each checkpoint's gradients
            self.features_ = [self._features() for _ in models]
        else:  # a random projection is the same for every checkpoint: drawn once
            self.features_ = [self._features()] * len(models)
        self.train_ = []
        for model, feats in zip(self.models_, self.features_, strict=True):
            phi = feats(model, X, y)
            weight = torch.ones(len(phi), dtype=torch.double, device=phi.device)
            if self.trak_weighting:
                was = model.training
                model.eval()
                try:
                    with torch.no_grad():
                        logits = model(X)
                finally:
                    model.train(was)
                p = torch.softmax(logits.double(), -1).gather(-1, y.view(-1, 1))
                weight = 1 - p.squeeze(-1)
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

    def _test_features(self, X: Any, y: Any, names: tuple[str, str]) -> list[torch.Tensor]:
        check_is_fitted(self, "train_")
        X, y = labelled_data(self.models_[0], X, y, names)
        return [
            feats(model, X, y) for model, feats in zip(self.models_, self.features_, strict=True)
        ]

    def _scores(self, tests: list[torch.Tensor], lam: float) -> np.ndarray:
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
        return self._scores(self._test_features(X, y, ("X", "y")), self._lambda(damping))

    def _lambda(self, damping: float | None) -> float:
        """The λ to use: the call's, else the chosen or given one, else 1e-3."""
        check_scalar(damping, "damping", low=0, inclusive="neither", allow_none=True)
        if damping is not None:
            return damping
        return self.damping if self.damping is not None else 1e-3

    def choose_damping(
        self,
        X_val: Any,
        y_val: Any,
        subsets: np.ndarray,
        values: np.ndarray,
        grid: Sequence[float] = DAMPING_GRID,
    ) -> float:
        """λ with the best LDS on validation points; stored as `damping` and used from then on."""
        tests = self._test_features(X_val, y_val, ("X_val", "y_val"))
        grid = [
            check_scalar(lam, f"grid[{i}]", low=0, inclusive="neither")
            for i, lam in enumerate(check_sequence(grid, "grid"))
        ]
        results = {lam: lds(self._scores(tests, lam), subsets, values)[0] for lam in grid}
        self.damping_scores_ = results
        self.damping = max(results, key=lambda lam: (results[lam], -lam))
        return self.damping

    @staticmethod
    def _pair(value: Any, name: str) -> tuple[Any, Any]:
        pair = check_type(value, name, (tuple, list), what="a pair (X, y)")
        if len(pair) != 2:
            raise ValueError(f"{name} must be a pair (X, y), got {len(pair)} items")
        return pair[0], pair[1]

    def explain(self, model: Any, inputs: Any, *, target: Any = None, **kw: Any) -> Explanation:
        """model: a checkpoint or a list of them; inputs: (X_test, y_test); train=(X, y): the
        data to attribute to. `target` must be None (the function is set at construction)."""
        if target is not None:
            raise ValueError(
                f"target must be None here, got {target!r}: the function attributed is set at "
                f"construction, InfluenceAttributor(target=...) with one of {TARGETS}"
            )
        if "train" not in kw:
            raise ValueError("explain needs train=(X_train, y_train): the data to attribute to")
        models = checkpoint_list(model, "model")
        (X_tr, y_tr), (X_te, y_te) = (
            self._pair(kw["train"], "train"),
            self._pair(inputs, "inputs"),
        )
        self._cache(models, X_tr, y_tr, ("train[0]", "train[1]"))
        tests = self._test_features(X_te, y_te, ("inputs[0]", "inputs[1]"))
        return Explanation(
            self._scores(tests, self._lambda(None)),
            kind="data",
            meta={
                "kind": self.kind,
                "k": self.k,
                "damping": self.damping,
                "preconditioner": self.preconditioner,
            },
        )
