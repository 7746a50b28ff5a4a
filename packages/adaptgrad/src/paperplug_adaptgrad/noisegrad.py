"""The paper's other smoothing baseline, NoiseGrad (Bykov et al., AAAI 2022): noise on the model's
weights instead of its inputs, ĝ(x) = 1/(m+1)·[∇f_w(x) + Σ_k ∇f_{w⊙η_k}(x)], η_k ~ N(1, std²).

It wraps a gradient operator built for each perturbed model, so it composes with input smoothing:
NoiseGrad around SmoothGrad is NoiseGrad++ (FusionGrad in Bykov et al.), around AdaptGrad it is the
paper's NoiseGrad + AdaptGrad; any base method (gradient, G×I, IG) sits on top.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from paperplug.checks import check_callable, check_scalar, check_type
from paperplug_adaptgrad.smoothing import GradientOperator, accumulator_dtype

GradientBuilder = Callable[[Callable[[torch.Tensor], Any]], GradientOperator]  # model -> operator


class WeightNoise:
    """NoiseGrad's settings: `n_models` copies of the model with every weight multiplied by
    η ~ N(1, std²) (std 0.2 and 50 models as in the AdaptGrad paper's code).

    Parameters whose name contains one of `skip` stay exact (the paper's code skips "classifier").
    The unperturbed model counts as model 0 when `include_clean`, as in the paper's code.
    """

    def __init__(
        self,
        std: float = 0.2,
        n_models: int = 50,
        *,
        include_clean: bool = True,
        skip: Sequence[str] = (),
    ) -> None:
        self.std = std
        self.n_models = n_models
        self.include_clean = include_clean
        self.skip = skip

    def check(self) -> None:
        check_scalar(self.n_models, "n_models", "int", low=1)
        check_scalar(self.std, "std", low=0.0)  # of the weight noise
        if (
            not isinstance(self.skip, Sequence)
            or isinstance(self.skip, str)
            or not all(isinstance(s, str) for s in self.skip)
        ):
            raise TypeError(f"skip must be a sequence of parameter-name parts, got {self.skip!r}")

    def operator(
        self, model: Any, make_gradient: GradientBuilder, generator: torch.Generator
    ) -> WeightSmoothedGradient:
        """The NoiseGrad operator around `make_gradient(perturbed model)`, noise from `generator`."""
        self.check()
        check_callable(make_gradient, "make_gradient", what="function (model -> gradient operator)")
        check_type(generator, "generator", torch.Generator)
        if not isinstance(model, torch.nn.Module) or not any(True for _ in model.parameters()):
            raise TypeError(
                "NoiseGrad perturbs the model's weights: model must be a torch.nn.Module with "
                f"parameters, got {type(model).__name__}"
            )
        return WeightSmoothedGradient(model, make_gradient, self, generator)


class WeightSmoothedGradient:
    """A gradient operator averaging `make_gradient(f_{w⊙η_k})` over the perturbed models.

    The models are evaluated through `torch.func.functional_call`: the caller's module and its
    weights are never written to. Models whose gradient is not finite are dropped.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        make_gradient: GradientBuilder,
        noise: WeightNoise,
        generator: torch.Generator,
    ) -> None:
        self.model = model
        self.make_gradient = make_gradient
        self.noise = noise
        self.generator = generator
        self.params = {k: p.detach() for k, p in model.named_parameters()}

    def perturbed(self) -> dict[str, torch.Tensor]:
        """One draw of w ⊙ η, parameter by parameter in the module's order (a fixed stream)."""
        out = {}
        for name, p in self.params.items():
            if any(part in name for part in self.noise.skip) or not p.is_floating_point():
                out[name] = p
                continue
            eta = torch.randn(p.shape, generator=self.generator, device=self.generator.device)
            out[name] = p * (1.0 + self.noise.std * eta.to(dtype=p.dtype, device=p.device))
        return out

    def __call__(self, points: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        total = torch.zeros_like(points, dtype=accumulator_dtype(points))
        count = torch.zeros(len(points), dtype=total.dtype, device=points.device)
        for k in range(self.noise.n_models + int(self.noise.include_clean)):
            params = self.params if self.noise.include_clean and k == 0 else self.perturbed()
            model_k = _Functional(self.model, params)
            grads = self.make_gradient(model_k)(points, targets)
            finite = torch.isfinite(grads.reshape(len(points), -1)).all(dim=1)  # (points,)
            keep = finite.reshape(-1, *[1] * (points.dim() - 1))
            total += torch.where(keep, grads, 0.0).to(total.dtype)
            count += finite
        return (total / count.reshape(-1, *[1] * (points.dim() - 1))).to(points.dtype)


class _Functional:
    """`module` called with `params` in place of its own (buffers unchanged)."""

    def __init__(self, module: torch.nn.Module, params: dict[str, torch.Tensor]) -> None:
        self.module, self.params = module, params

    def __call__(self, x: torch.Tensor) -> Any:
        return torch.func.functional_call(self.module, self.params, (x,))
