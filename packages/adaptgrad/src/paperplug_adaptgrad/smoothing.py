"""Stage 2, the smoothed gradient: ĝ(x) = 1/(n+1)·[∇f(x) + Σ_s ∇f(x + ε_s)], ε_s ~ N(0, diag σ²)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from paperplug.checks import (
    argument_errors,
    check_callable,
    check_float_tensor,
    check_scalar,
    check_tensor,
    check_type,
)

Forward = Callable[[torch.Tensor], torch.Tensor]
GradientOperator = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (points, targets) -> ∇


def class_gradient(
    forward: Forward, points: torch.Tensor, targets: torch.Tensor, batch_size: int | None = None
) -> torch.Tensor:
    """∂ logit_{targets[k]} / ∂ points[k] for every row k, in batches of at most `batch_size` rows."""
    check_callable(forward, "forward")
    check_float_tensor(points, "points", min_samples=1)
    targets = check_targets(targets, len(points))
    check_scalar(batch_size, "batch_size", "int", low=1, allow_none=True)
    with argument_errors("points", "the shape the model takes"):
        return _class_gradient(forward, points, targets, batch_size)


def _class_gradient(
    forward: Forward, points: torch.Tensor, targets: torch.Tensor, batch_size: int | None = None
) -> torch.Tensor:
    step = batch_size or len(points)
    grads = []
    with torch.enable_grad():
        for start in range(0, len(points), step):
            p = points[start : start + step].detach().requires_grad_(True)
            t = targets[start : start + step]
            logits = forward(p)
            if logits.dim() != 2 or len(logits) != len(p):
                raise ValueError(
                    f"the model must return logits of shape (batch, classes), got {tuple(logits.shape)}"
                )
            if int(t.max()) >= logits.shape[1]:
                raise ValueError(
                    f"target {int(t.max())} out of range for {logits.shape[1]} classes "
                    "(targets must be the model's class indices)"
                )
            # Rows are independent, so the gradient of the sum is each row's own gradient.
            (grad,) = torch.autograd.grad(logits.gather(1, t[:, None]).sum(), p)
            grads.append(grad)
    return torch.cat(grads)


def check_targets(targets: torch.Tensor, n: int) -> torch.Tensor:
    """`targets` as n non-negative class indices (int64)."""
    check_type(targets, "targets", torch.Tensor)
    t = check_tensor(targets, "targets", dtype="int", shape=(n,), min_samples=0)
    if bool((t < 0).any()):
        raise ValueError("targets must be non-negative class indices")
    return t


def accumulator_dtype(points: torch.Tensor) -> torch.dtype:
    """float64 for running sums over samples (so summing one sample at a time loses nothing), except
    on devices without it."""
    return points.dtype if points.device.type == "mps" else torch.float64


class SmoothedGradient:
    """A gradient operator averaging `gradient` over x + ε, ε ~ N(0, diag σ(x)²): SmoothGrad or AdaptGrad.

    `scale` maps points to σ (shaped like them). The clean gradient counts as sample 0 and the
    noisy samples go through `gradient` in as few calls as `batch_size` rows allow (one call
    when it is None). Samples whose gradient is not finite are dropped, as in the paper's code.
    `out_of_range_rate` reports the share of noisy coordinates that left [lo, hi]. The noise comes
    from `generator` (default: one seeded 0), never from torch's global generator.
    """

    def __init__(
        self,
        gradient: GradientOperator,
        scale: Callable[[torch.Tensor], torch.Tensor],
        n_samples: int = 50,
        *,
        include_clean: bool = True,
        bounds: tuple[torch.Tensor, torch.Tensor] | None = None,
        generator: torch.Generator | None = None,
        batch_size: int | None = None,
    ) -> None:
        check_callable(gradient, "gradient")
        check_callable(scale, "scale")
        check_scalar(n_samples, "n_samples", "int", low=1)
        check_type(include_clean, "include_clean", bool, what="True or False")
        if bounds is not None:
            if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
                raise TypeError(f"bounds must be a pair (lo, hi) of tensors, got {bounds!r}")
            for bound in bounds:
                check_float_tensor(bound, "bounds", min_samples=0)
        if generator is not None:
            check_type(generator, "generator", torch.Generator)
        check_scalar(batch_size, "batch_size", "int", low=1, allow_none=True)
        self.gradient = gradient
        self.scale = scale
        self.n_samples = n_samples
        self.include_clean = include_clean
        self.bounds = bounds
        self.generator = generator
        self.batch_size = batch_size
        self.n_out_of_range = 0
        self.n_drawn = 0

    @property
    def out_of_range_rate(self) -> float:
        return self.n_out_of_range / self.n_drawn if self.n_drawn else float("nan")

    def __call__(self, points: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        check_float_tensor(points, "points")
        targets = check_targets(targets, len(points))
        if self.generator is None:
            self.generator = torch.Generator(device=points.device).manual_seed(0)
        sigma = self.scale(points)
        rows = self.n_samples + int(self.include_clean)  # row 0 is the clean point when included
        per_call = max(1, (self.batch_size or rows * len(points)) // len(points))
        total = torch.zeros_like(points, dtype=accumulator_dtype(points))
        count = torch.zeros(len(points), dtype=total.dtype, device=points.device)
        for start in range(0, rows, per_call):
            stack = [
                points if self.include_clean and s == 0 else self._noisy(points, sigma)
                for s in range(start, min(start + per_call, rows))
            ]
            self._accumulate(torch.stack(stack), targets, total, count)
        return (total / count.reshape(-1, *[1] * (points.dim() - 1))).to(points.dtype)

    def _noisy(self, points: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
        """One noise sample shaped like `points`. Samples are drawn one at a time in a fixed order,
        so the generator's stream, and the result, do not depend on how `batch_size` groups them."""
        eps = torch.randn(
            points.shape, generator=self.generator, dtype=points.dtype, device=points.device
        )
        noisy = points + eps * sigma
        if self.bounds is not None:
            lo, hi = self.bounds
            self.n_out_of_range += int(((noisy < lo) | (noisy > hi)).sum())
            self.n_drawn += noisy.numel()
        return noisy

    def _accumulate(
        self, stack: torch.Tensor, targets: torch.Tensor, total: torch.Tensor, count: torch.Tensor
    ) -> None:
        m = len(stack)  # stack: (m, points, ...)
        grads = self.gradient(stack.reshape(-1, *stack.shape[2:]), targets.repeat(m)).reshape(
            stack.shape
        )
        finite = torch.isfinite(grads.reshape(m, len(targets), -1)).all(dim=2)  # (m, points)
        keep = finite.reshape(*finite.shape, *[1] * (stack.dim() - 2))
        for s in range(m):  # one sample at a time: the same summation order for any batch_size
            total += torch.where(keep[s], grads[s], 0.0).to(total.dtype)
        count += finite.sum(dim=0)
