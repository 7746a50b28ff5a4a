"""The Explainer role: SmoothGrad and AdaptGrad around any base gradient method, on any torch model."""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import numpy as np
import torch

from paperplug import Explanation
from paperplug_adaptgrad.composition import BASE_METHODS, BaseMethod
from paperplug_adaptgrad.noise_scale import Bounds, adaptive_sigma, resolve_bounds, smoothgrad_sigma
from paperplug_adaptgrad.smoothing import Forward, SmoothedGradient, class_gradient


def as_forward(model: Any) -> Forward:
    """Inputs → logits for a torch module or function; Hugging Face outputs give their `.logits`."""
    if not callable(model):
        raise TypeError(
            f"model must be a torch module or a callable returning logits, got {type(model).__name__}"
        )

    def forward(x: torch.Tensor) -> torch.Tensor:
        out = model(x)
        out = getattr(out, "logits", out)
        if isinstance(out, (tuple, list)):
            out = out[0]
        if not isinstance(out, torch.Tensor):
            raise TypeError(
                f"the model returned {type(out).__name__}; expected a logits tensor or `.logits`"
            )
        return out

    return forward


def as_input_tensor(inputs: Any) -> torch.Tensor:
    """A floating (batch, ...) tensor from a tensor or numpy array, checked, never copied into."""
    if isinstance(inputs, np.ndarray):
        inputs = torch.from_numpy(inputs)
    if not isinstance(inputs, torch.Tensor):
        raise TypeError(
            f"inputs must be a torch.Tensor or numpy array, got {type(inputs).__name__}"
        )
    if not inputs.is_floating_point():
        raise TypeError(f"inputs must be floating point, got dtype {inputs.dtype}")
    if inputs.dim() < 2 or len(inputs) == 0:
        raise ValueError(
            f"inputs must be a non-empty batch (batch, ...), got shape {tuple(inputs.shape)}"
        )
    if not bool(torch.isfinite(inputs).all()):
        raise ValueError("inputs contain NaN or infinite values")
    return inputs.detach()


def as_targets(target: Any, forward: Forward, x: torch.Tensor) -> torch.Tensor:
    """One class index per input: given (an int or a sequence), or the model's prediction when None."""
    if target is None:
        with torch.no_grad():
            return forward(x).argmax(dim=1)
    t = torch.as_tensor(target, device=x.device)
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"target must be class indices (int), got dtype {t.dtype}")
    t = t.long().reshape(-1).expand(len(x)) if t.numel() == 1 else t.long()
    if t.shape != (len(x),):
        raise ValueError(
            f"target must be an int or one per input ({len(x)}), got shape {tuple(t.shape)}"
        )
    if bool((t < 0).any()):
        raise ValueError("target must be non-negative class indices")
    return t.contiguous()


class GradientSmoothing:
    """Shared `explain` of SmoothGrad and AdaptGrad; subclasses define `noise_scale(points, lo, hi)`."""

    name = "gradient_smoothing"

    def __init__(
        self,
        n_samples: int = 50,
        bounds: Bounds = (0.0, 1.0),
        base: str | BaseMethod = "gradient",
        *,
        include_clean: bool = True,
        channel_dim: int = 1,
        batch_size: int | None = None,
        seed: int = 0,
        **base_params: Any,
    ) -> None:
        self.n_samples = n_samples
        self.bounds = bounds
        self.base = base
        self.include_clean = include_clean
        self.channel_dim = channel_dim
        self.batch_size = batch_size
        self.seed = seed
        self.base_params = base_params

    def noise_scale(self, points: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def explain(
        self, model: Any, inputs: Any, *, target: Any = None, bounds: Bounds | None = None
    ) -> Explanation:
        """Attributions shaped like `inputs` (same type back: tensor or numpy) for the target class.

        `bounds` (lo, hi) are the valid input range, global or per channel; they default to the
        explainer's own. Targets default to the model's predicted class.
        """
        if not isinstance(self.n_samples, int) or self.n_samples < 0:
            raise ValueError(f"n_samples must be an int ≥ 0, got {self.n_samples!r}")
        x = as_input_tensor(inputs)
        lo, hi = resolve_bounds(x, self.bounds if bounds is None else bounds, self.channel_dim)
        tol = 1e-5 * float((hi - lo).max())
        if bool(((x < lo - tol) | (x > hi + tol)).any()):
            raise ValueError(
                f"inputs lie outside the stated bounds [{_show(lo)}, {_show(hi)}] "
                f"(min {float(x.min()):.4g}, max {float(x.max()):.4g}): pass bounds=(lo, hi)"
            )
        base = BASE_METHODS.get(self.base) if isinstance(self.base, str) else self.base
        if base is None:
            raise ValueError(
                f"base must be one of {sorted(BASE_METHODS)} or a callable, got {self.base!r}"
            )
        if isinstance(model, torch.nn.Module) and model.training:
            warnings.warn(
                "the model is in training mode; call model.eval() for stable explanations",
                stacklevel=2,
            )
        forward = as_forward(model)
        targets = as_targets(target, forward, x)
        gradient = partial(class_gradient, forward, batch_size=self.batch_size)
        smoother = None
        if self.n_samples > 0:
            generator = torch.Generator(device=x.device).manual_seed(self.seed)
            smoother = SmoothedGradient(
                gradient,
                partial(self.noise_scale, lo=lo, hi=hi),
                self.n_samples,
                include_clean=self.include_clean,
                bounds=(lo, hi),
                generator=generator,
                batch_size=self.batch_size,
            )
            gradient = smoother
        values = base(gradient, x, targets, **self.base_params).detach()
        meta = {
            "method": self.name,
            "base": getattr(base, "__name__", repr(base)),
            "n_samples": self.n_samples,
            "target": targets,
            "seed": self.seed,
            "out_of_range_rate": smoother.out_of_range_rate if smoother else 0.0,
            "params": self._scale_params(),
        }
        return Explanation(
            values.numpy() if isinstance(inputs, np.ndarray) else values, "feature", meta
        )

    def _scale_params(self) -> dict[str, float]:
        return {}


class SmoothGrad(GradientSmoothing):
    """SmoothGrad (Smilkov et al. 2017), the paper's baseline: one σ = α·(hi − lo) for every input dimension.

    `n_samples=0` gives the plain (vanilla) base method.
    """

    name = "smoothgrad"

    def __init__(
        self,
        alpha: float = 0.2,
        n_samples: int = 50,
        bounds: Bounds = (0.0, 1.0),
        base: str | BaseMethod = "gradient",
        *,
        include_clean: bool = True,
        channel_dim: int = 1,
        batch_size: int | None = None,
        seed: int = 0,
        **base_params: Any,
    ) -> None:
        super().__init__(
            n_samples,
            bounds,
            base,
            include_clean=include_clean,
            channel_dim=channel_dim,
            batch_size=batch_size,
            seed=seed,
            **base_params,
        )
        self.alpha = alpha

    def noise_scale(self, points: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
        return smoothgrad_sigma(points, lo, hi, self.alpha)

    def _scale_params(self) -> dict[str, float]:
        return {"alpha": self.alpha}


class AdaptGrad(GradientSmoothing):
    """AdaptGrad: per-dimension σ_i from the distance to the nearest bound at confidence `c`.

    Wraps any base method (`base="gradient" | "gradient_x_input" | "integrated_gradients"` or a
    callable `(gradient, x, targets, **kw)`); extra keywords such as `n_steps` go to the base.
    """

    name = "adaptgrad"

    def __init__(
        self,
        c: float = 0.95,
        n_samples: int = 50,
        bounds: Bounds = (0.0, 1.0),
        base: str | BaseMethod = "gradient",
        *,
        include_clean: bool = True,
        channel_dim: int = 1,
        batch_size: int | None = None,
        seed: int = 0,
        **base_params: Any,
    ) -> None:
        super().__init__(
            n_samples,
            bounds,
            base,
            include_clean=include_clean,
            channel_dim=channel_dim,
            batch_size=batch_size,
            seed=seed,
            **base_params,
        )
        self.c = c

    def noise_scale(self, points: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
        return adaptive_sigma(points, lo, hi, self.c)

    def _scale_params(self) -> dict[str, float]:
        return {"c": self.c}


def _show(bound: torch.Tensor) -> str:
    values = bound.flatten().tolist()
    return (
        f"{values[0]:.4g}"
        if len(values) == 1
        else "[" + ", ".join(f"{v:.4g}" for v in values) + "]"
    )
