"""The Explainer role: SmoothGrad, AdaptGrad and NoiseGrad (input and/or weight noise) around
any base gradient method, on any torch model."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import torch

from paperplug import Explanation
from paperplug.checks import argument_errors, check_scalar, check_tensor, check_type
from paperplug_adaptgrad.composition import BASE_METHODS, BaseMethod
from paperplug_adaptgrad.noise_scale import (
    Bounds,
    adaptive_sigma,
    check_range,
    resolve_bounds,
    smoothgrad_sigma,
)
from paperplug_adaptgrad.noisegrad import WeightNoise
from paperplug_adaptgrad.smoothing import (
    Forward,
    GradientOperator,
    SmoothedGradient,
    _class_gradient,
)


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


def model_dtype_device(model: Any) -> tuple[torch.dtype | None, torch.device | None]:
    """The dtype and device of a module's first floating parameter (or buffer); None for a
    plain function or a module without any."""
    if isinstance(model, torch.nn.Module):
        for t in (*model.parameters(), *model.buffers()):
            if t.is_floating_point():
                return t.dtype, t.device
    return None, None


def as_input_tensor(inputs: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A floating (batch, ...) tensor from a tensor or numpy array, cast to `dtype` (the model's)
    when given; checked, never written to."""
    if not isinstance(inputs, (torch.Tensor, np.ndarray)):
        raise TypeError(
            f"inputs must be a torch.Tensor or numpy array, got {type(inputs).__name__}"
        )
    x = check_tensor(inputs, "inputs", dtype="numeric")
    if not x.is_floating_point():
        raise TypeError(f"inputs must be floating point, got dtype {x.dtype}")
    if x.dim() < 2:
        raise ValueError(f"inputs must be a batch (batch, ...), got shape {tuple(x.shape)}")
    if x.is_inference():  # made under torch.inference_mode(): a normal copy can carry gradients
        x = x.clone()
    return x if dtype is None else x.to(dtype)


def as_targets(target: Any, forward: Forward, x: torch.Tensor) -> torch.Tensor:
    """One class index per input: given (an int or a sequence), or the model's prediction when
    None (a class past the model's outputs is caught where the gradient is taken)."""
    if target is None:
        with torch.no_grad(), argument_errors("inputs", "the shape the model takes"):
            return forward(x).argmax(dim=1)
    t = check_tensor(target, "target", dtype="int", min_samples=0).to(x.device)
    t = t.reshape(-1).expand(len(x)) if t.numel() == 1 else t
    if t.shape != (len(x),):
        raise ValueError(
            f"target must be an int or one per input ({len(x)}), got shape {tuple(t.shape)}"
        )
    if bool((t < 0).any()):
        raise ValueError("target must be non-negative class indices")
    return t.contiguous()


class GradientSmoothing:
    """Shared `explain` of SmoothGrad, AdaptGrad and NoiseGrad; subclasses with input noise define
    `noise_scale(points, lo, hi)`.

    `weight_noise=WeightNoise(std, n_models)` adds NoiseGrad's weight noise around the input
    smoothing (NoiseGrad++ around SmoothGrad, NoiseGrad + AdaptGrad around AdaptGrad).
    """

    name = "gradient_smoothing"

    def __init__(
        self,
        n_samples: int = 50,
        bounds: Bounds | None = (0.0, 1.0),
        base: str | BaseMethod = "gradient",
        *,
        include_clean: bool = True,
        channel_dim: int = 1,
        batch_size: int | None = None,
        seed: int = 0,
        weight_noise: WeightNoise | None = None,
        **base_params: Any,
    ) -> None:
        self.n_samples = n_samples
        self.bounds = bounds
        self.base = base
        self.include_clean = include_clean
        self.channel_dim = channel_dim
        self.batch_size = batch_size
        self.seed = seed
        self.weight_noise = weight_noise
        self.base_params = base_params

    def noise_scale(self, points: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def explain(
        self, model: Any, inputs: Any, *, target: Any = None, bounds: Bounds | None = None
    ) -> Explanation:
        """Attributions shaped like `inputs`, same type and dtype back (tensor or numpy), for the
        target class.

        Inputs are cast to the dtype of the model's parameters (a float64 array for a float32
        model); a tensor must lie on the model's device, an array is moved there. `bounds` (lo, hi) are the valid input range,
        global or per channel; they default to the explainer's own. Targets default to the
        model's predicted class. Not inside `torch.inference_mode()`: it forbids gradients.
        """
        self._check_settings()
        if torch.is_inference_mode_enabled():
            raise RuntimeError(
                "explain() takes gradients, which torch.inference_mode() forbids: call it "
                "outside the inference_mode block (an enclosing torch.no_grad() is fine)"
            )
        dtype, device = model_dtype_device(model)
        x = as_input_tensor(inputs, dtype)
        if isinstance(inputs, np.ndarray) and device is not None:
            x = x.to(device)  # an array has no device: it goes to the model's
        if device is not None and device != x.device:
            raise ValueError(
                f"inputs are on {x.device} but the model's parameters on {device}: move one"
            )
        bounds = self.bounds if bounds is None else bounds
        lo = hi = None
        if self.n_samples > 0 or bounds is not None:
            if bounds is None:
                raise ValueError("input noise needs bounds=(lo, hi), the valid input range")
            lo, hi = self._checked_bounds(x, bounds)
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
        input_noise = torch.Generator(device=x.device).manual_seed(self.seed)
        smoothers: list[SmoothedGradient] = []

        def make_gradient(model_k: Any) -> GradientOperator:
            gradient = partial(_class_gradient, as_forward(model_k), batch_size=self.batch_size)
            if self.n_samples == 0:
                return gradient
            smoother = SmoothedGradient(
                gradient,
                partial(self.noise_scale, lo=lo, hi=hi),
                self.n_samples,
                include_clean=self.include_clean,
                bounds=(lo, hi),
                generator=input_noise,
                batch_size=self.batch_size,
            )
            smoothers.append(smoother)
            return smoother

        weight_noise = self._weight_noise()
        if weight_noise is None:
            operator = make_gradient(model)
        else:  # its own stream, so adding weight noise leaves the input noise's draws alone
            seed = int(np.random.SeedSequence([self.seed, 1]).generate_state(1)[0])
            operator = weight_noise.operator(
                model, make_gradient, torch.Generator(device=device or x.device).manual_seed(seed)
            )
        with argument_errors("inputs", "the shape the model takes"):
            values = base(operator, x, targets, **self.base_params).detach()
        drawn = sum(s.n_drawn for s in smoothers)
        meta = {
            "method": self.name,
            "base": getattr(base, "__name__", repr(base)),
            "n_samples": self.n_samples,
            "n_models": weight_noise.n_models if weight_noise else 0,
            "target": targets,
            "seed": self.seed,
            "out_of_range_rate": sum(s.n_out_of_range for s in smoothers) / drawn if drawn else 0.0,
            "params": self._scale_params(),
        }
        if isinstance(inputs, np.ndarray):
            return Explanation(values.cpu().numpy().astype(inputs.dtype), "feature", meta)
        return Explanation(values.to(inputs.dtype), "feature", meta)

    def _check_settings(self) -> None:
        check_scalar(self.n_samples, "n_samples", "int", low=0)
        check_scalar(self.batch_size, "batch_size", "int", low=1, allow_none=True)
        check_scalar(self.seed, "seed", "int")
        check_type(self.include_clean, "include_clean", bool)
        check_scalar(self.channel_dim, "channel_dim", "int")
        if not (isinstance(self.base, str) or callable(self.base)):
            raise TypeError(f"base must be a method's name or a callable, got {self.base!r}")
        if self.weight_noise is not None:  # NoiseGrad's own settings are its parameters
            try:
                check_type(self.weight_noise, "weight_noise", WeightNoise).check()
            except ValueError as exc:
                raise ValueError(f"weight_noise: {exc}") from None
        elif (noise := self._weight_noise()) is not None:
            noise.check()

    def _checked_bounds(self, x: torch.Tensor, bounds: Bounds) -> tuple[torch.Tensor, torch.Tensor]:
        lo, hi = resolve_bounds(x, bounds, self.channel_dim)
        tol = 1e-5 * float((hi - lo).max())
        if bool(((x < lo - tol) | (x > hi + tol)).any()):
            raise ValueError(
                f"inputs lie outside the stated bounds [{_show(lo)}, {_show(hi)}] "
                f"(min {float(x.min()):.4g}, max {float(x.max()):.4g}): pass bounds=(lo, hi)"
            )
        return lo, hi

    def _weight_noise(self) -> WeightNoise | None:
        return self.weight_noise

    def _scale_params(self) -> dict[str, Any]:
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
        weight_noise: WeightNoise | None = None,
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
            weight_noise=weight_noise,
            **base_params,
        )
        self.alpha = alpha

    def noise_scale(self, points: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
        check_range(points, lo, hi, "points")
        return smoothgrad_sigma(points, lo, hi, self.alpha)

    def _scale_params(self) -> dict[str, Any]:
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
        weight_noise: WeightNoise | None = None,
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
            weight_noise=weight_noise,
            **base_params,
        )
        self.c = c

    def noise_scale(self, points: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
        check_range(points, lo, hi, "points")
        return adaptive_sigma(points, lo, hi, self.c)

    def _scale_params(self) -> dict[str, Any]:
        return {"c": self.c}


class NoiseGrad(GradientSmoothing):
    """NoiseGrad (Bykov et al. 2022), a baseline of the paper: the base method's gradient averaged
    over `n_models` copies of the model with weights w ⊙ η, η ~ N(1, std²); no input noise.

    Needs a torch module (its weights are perturbed through `torch.func.functional_call`, never
    written to). No bounds are needed; `skip` lists parameter-name parts left exact.
    """

    name = "noisegrad"

    def __init__(
        self,
        std: float = 0.2,
        n_models: int = 50,
        base: str | BaseMethod = "gradient",
        *,
        include_clean: bool = True,
        skip: Sequence[str] = (),
        batch_size: int | None = None,
        seed: int = 0,
        **base_params: Any,
    ) -> None:
        super().__init__(
            0,
            None,
            base,
            include_clean=include_clean,
            batch_size=batch_size,
            seed=seed,
            **base_params,
        )
        self.std = std
        self.n_models = n_models
        self.skip = skip

    def _weight_noise(self) -> WeightNoise:
        return WeightNoise(
            self.std, self.n_models, include_clean=self.include_clean, skip=self.skip
        )

    def _scale_params(self) -> dict[str, Any]:
        return {"std": self.std, "n_models": self.n_models}


class NoiseGradPlusPlus(SmoothGrad):
    """NoiseGrad++ (FusionGrad in Bykov et al. 2022), a baseline of the paper: NoiseGrad's weight
    noise around SmoothGrad's input noise, (n_models + 1)·(n_samples + 1) gradients per input.

    Defaults are the AdaptGrad paper's code: 50 models (std 0.2) × 50 input samples (α = 0.2).
    """

    name = "noisegrad_pp"

    def __init__(
        self,
        std: float = 0.2,
        n_models: int = 50,
        alpha: float = 0.2,
        n_samples: int = 50,
        bounds: Bounds = (0.0, 1.0),
        base: str | BaseMethod = "gradient",
        *,
        include_clean: bool = True,
        skip: Sequence[str] = (),
        channel_dim: int = 1,
        batch_size: int | None = None,
        seed: int = 0,
        **base_params: Any,
    ) -> None:
        super().__init__(
            alpha,
            n_samples,
            bounds,
            base,
            include_clean=include_clean,
            channel_dim=channel_dim,
            batch_size=batch_size,
            seed=seed,
            **base_params,
        )
        self.std = std
        self.n_models = n_models
        self.skip = skip

    def _weight_noise(self) -> WeightNoise:
        return WeightNoise(
            self.std, self.n_models, include_clean=self.include_clean, skip=self.skip
        )

    def _scale_params(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "std": self.std, "n_models": self.n_models}


def _show(bound: torch.Tensor) -> str:
    values = bound.flatten().tolist()
    return (
        f"{values[0]:.4g}"
        if len(values) == 1
        else "[" + ", ".join(f"{v:.4g}" for v in values) + "]"
    )
