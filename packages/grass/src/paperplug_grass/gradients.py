"""Per-sample gradients of a target function (paper §2): any torch model through `torch.func`
(vmap over grad), or, for linear and 2-D conv layers, the two factors of each sample's weight
gradient G = Σ_t δ_t a_tᵀ — the layer input a (a conv's unfolded input patches, with a ones
column for the bias) and the output gradient δ, at every position t — captured by hooks, so
the d_out × d_in gradient itself is never formed."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

TARGETS = ("margin", "loss")


def target_values(logits: torch.Tensor, y: torch.Tensor, target: str = "margin") -> torch.Tensor:
    """Per-sample target: TRAK's margin log p_y − log(1 − p_y) (the correct logit minus the
    log-sum-exp of the others), or the cross-entropy loss."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if target == "loss":
        return nn.functional.cross_entropy(logits, y, reduction="none")
    correct = logits.gather(-1, y.view(-1, 1)).squeeze(-1)
    is_y = torch.arange(logits.shape[-1], device=logits.device) == y.unsqueeze(-1)  # vmap-safe
    others = logits.masked_fill(is_y, float("-inf"))
    return correct - torch.logsumexp(others, -1)


def per_sample_gradients(
    model: nn.Module, X: torch.Tensor, y: torch.Tensor, target: str = "margin"
) -> torch.Tensor:
    """(B, p): each sample's gradient of its target over every trainable parameter."""
    from torch.func import functional_call, grad, vmap

    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}

    def one(p: dict, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        out = functional_call(model, p, (x.unsqueeze(0),))
        return target_values(out, t.unsqueeze(0), target).squeeze(0)

    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, X, y)
    return torch.cat([g.reshape(len(X), -1) for g in grads.values()], 1)


def refusal(module: nn.Module) -> str | None:
    """Why the factored compressors cannot factor this module's gradient, or None if they can."""
    if isinstance(module, nn.Linear):
        return None
    if isinstance(module, nn.Conv2d):
        if module.groups == 1:
            return None
        return f"a grouped Conv2d (groups={module.groups}), whose gradient is one a ⊗ δ per group"
    return f"a {type(module).__name__}, not nn.Linear or nn.Conv2d"


def factored_layers(model: nn.Module) -> list[str]:
    """The modules whose gradients the factored compressors take: nn.Linear and nn.Conv2d."""
    return [name for name, m in model.named_modules() if name and refusal(m) is None]


def idle_layers(model: nn.Module, X: torch.Tensor, names: Sequence[str]) -> list[str]:
    """The layers among `names` whose forward does not run on X (as nn.MultiheadAttention's
    out_proj: its parent uses the weight directly), found with hooks on one no-grad pass."""
    modules = dict(model.named_modules())
    ran: set[str] = set()
    handles = [modules[n].register_forward_hook(lambda *_, n=n: ran.add(n)) for n in names]
    try:
        with torch.no_grad():
            model(X)
    finally:
        for h in handles:
            h.remove()
    return [n for n in names if n not in ran]


def factor_shape(module: nn.Module) -> tuple[int, int]:
    """(d_out, d_in) of the layer's gradient [W | b] as a matrix: a conv's weight flattened to
    out_channels × (in_channels · kh · kw), the bias a last column when there is one."""
    bias = int(module.bias is not None)
    if isinstance(module, nn.Conv2d):
        kh, kw = module.kernel_size
        return module.out_channels, module.in_channels * kh * kw + bias
    return module.out_features, module.in_features + bias


def _patches(conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """(B, L, C·kh·kw): the input patch each of the L output positions sees, ordered as the
    conv's weight flattened (channel, row, column); padding, stride and dilation as the conv."""
    if x.ndim != 4:
        raise ValueError(f"the conv layer got a {x.ndim}-D input; factoring needs (B, C, H, W)")
    if isinstance(conv.padding, str):  # "valid" or "same" (any extra on the right, as torch)
        totals = [d * (k - 1) if conv.padding == "same" else 0
                  for d, k in zip(conv.dilation, conv.kernel_size, strict=True)]  # fmt: skip
        pads = [side for t in reversed(totals) for side in (t // 2, t - t // 2)]
    else:
        ph, pw = conv.padding
        pads = [pw, pw, ph, ph]
    if any(pads):
        mode = "constant" if conv.padding_mode == "zeros" else conv.padding_mode
        x = F.pad(x, pads, mode=mode)
    cols = F.unfold(x, conv.kernel_size, dilation=conv.dilation, stride=conv.stride)
    return cols.transpose(1, 2)


def layer_factors(
    model: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    target: str = "margin",
    layers: Sequence[str] | None = None,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """For each linear or conv layer: (a (B, T, d_in), δ (B, T, d_out)), the sample's gradient
    [W | b] being Σ_t δ_t a_tᵀ over its T positions (a conv's output pixels, a sequence's
    tokens, and the positions of every call when a layer runs more than once: shared weights).
    Only layer outputs get gradients: no weight gradient exists."""
    modules = dict(model.named_modules())
    names = list(layers) if layers is not None else factored_layers(model)
    for name in names:
        if name not in modules or refusal(modules[name]) is not None:
            raise ValueError(f"{name!r} is not a linear or conv layer of the model")
    calls: dict[str, list[tuple[torch.Tensor, torch.Tensor]]] = {n: [] for n in names}

    def hook(name: str):
        def capture(module: nn.Module, args: tuple, out: torch.Tensor) -> torch.Tensor:
            calls[name].append((args[0].detach(), out))
            return out.clone()  # an in-place op after the layer (ReLU(inplace)) must not reach out

        return capture

    handles = [modules[n].register_forward_hook(hook(n)) for n in names]
    try:
        with torch.enable_grad():
            logits = model(X.detach())
            values = target_values(logits, y, target)
            idle = [n for n in names if not calls[n]]
            if idle:
                raise ValueError(f"layers {idle} do not run in the model's forward pass")
            outs = [out for n in names for _, out in calls[n]]
            deltas = torch.autograd.grad(values.sum(), outs, allow_unused=True)
    finally:
        for h in handles:
            h.remove()
    deltas = [
        torch.zeros_like(o) if d is None else d.detach() for o, d in zip(outs, deltas, strict=True)
    ]
    result, i = [], 0
    for n in names:
        module, parts = modules[n], []
        for a, _ in calls[n]:
            d, i = deltas[i], i + 1
            B = len(d)
            if isinstance(module, nn.Conv2d):
                a, d = _patches(module, a), d.reshape(B, d.shape[1], -1).transpose(1, 2)
            else:  # (B, ..., d) → (B, T, d): one position per sample, or one per token
                a, d = a.reshape(B, -1, a.shape[-1]), d.reshape(B, -1, d.shape[-1])
            parts.append((a, d))
        a, d = (torch.cat(f, 1) if len(f) > 1 else f[0] for f in zip(*parts, strict=True))
        if module.bias is not None:
            a = torch.cat([a, torch.ones_like(a[..., :1])], -1)
        result.append((a, d))
    return result
