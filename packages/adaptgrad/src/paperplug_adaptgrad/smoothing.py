"""Stage 2, the smoothed gradient: ĝ(x) = 1/(n+1)·[∇f(x) + Σ_s ∇f(x + ε_s)], ε_s ~ N(0, diag σ²)."""

from __future__ import annotations

from collections.abc import Callable

import torch

Forward = Callable[[torch.Tensor], torch.Tensor]
GradientOperator = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (points, targets) -> ∇


def class_gradient(
    forward: Forward, points: torch.Tensor, targets: torch.Tensor, batch_size: int | None = None
) -> torch.Tensor:
    """∂ logit_{targets[k]} / ∂ points[k] for every row k, in batches of at most `batch_size` rows."""
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
                    f"target {int(t.max())} out of range for {logits.shape[1]} classes"
                )
            # Rows are independent, so the gradient of the sum is each row's own gradient.
            (grad,) = torch.autograd.grad(logits.gather(1, t[:, None]).sum(), p)
            grads.append(grad)
    return torch.cat(grads)


class SmoothedGradient:
    """A gradient operator averaging `gradient` over x + ε, ε ~ N(0, diag σ(x)²): SmoothGrad or AdaptGrad.

    `scale` maps points to σ (shaped like them). The clean gradient counts as sample 0 and the
    noisy samples go through `gradient` in as few calls as `batch_size` rows allow (one call
    when it is None). Samples whose gradient is not finite are dropped, as in the paper's code.
    `out_of_range_rate` reports the share of noisy coordinates that left [lo, hi].
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
        if not isinstance(n_samples, int) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
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
        sigma = self.scale(points)
        n_points = len(points)
        rows = self.n_samples + int(self.include_clean)
        per_call = max(1, (self.batch_size or rows * n_points) // n_points)
        total = torch.zeros_like(points)
        count = torch.zeros(n_points, dtype=points.dtype, device=points.device)
        pending_clean, drawn = self.include_clean, 0
        while pending_clean or drawn < self.n_samples:
            m = min(per_call - int(pending_clean), self.n_samples - drawn)
            stack = [points[None]] if pending_clean else []
            if m > 0:
                eps = torch.randn(
                    (m, *points.shape),
                    generator=self.generator,
                    dtype=points.dtype,
                    device=points.device,
                )
                noisy = points + eps * sigma  # (m, points, ...)
                if self.bounds is not None:
                    lo, hi = self.bounds
                    self.n_out_of_range += int(((noisy < lo) | (noisy > hi)).sum())
                    self.n_drawn += noisy.numel()
                stack.append(noisy)
            self._accumulate(torch.cat(stack), targets, total, count)
            pending_clean, drawn = False, drawn + max(m, 0)
        return total / count.reshape(-1, *[1] * (points.dim() - 1))

    def _accumulate(
        self, stack: torch.Tensor, targets: torch.Tensor, total: torch.Tensor, count: torch.Tensor
    ) -> None:
        m = len(stack)
        grads = self.gradient(stack.reshape(-1, *stack.shape[2:]), targets.repeat(m)).reshape(
            stack.shape
        )
        finite = torch.isfinite(grads.reshape(m, len(targets), -1)).all(dim=2)  # (m, points)
        keep = finite.reshape(*finite.shape, *[1] * (stack.dim() - 2))
        total += torch.where(keep, grads, 0.0).sum(dim=0)
        count += finite.sum(dim=0)
