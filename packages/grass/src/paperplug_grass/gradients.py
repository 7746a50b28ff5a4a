"""Per-sample gradients of a target function (paper §2): any torch model through `torch.func`
(vmap over grad), or, for linear and 2-D conv layers, the two factors of each sample's weight
gradient G = Σ_t δ_t a_tᵀ — the layer input a (a conv's unfolded input patches, with a ones
column for the bias) and the output gradient δ, at every position t — captured by hooks, so
the d_out × d_in gradient itself is never formed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from paperplug.checks import (
    argument_errors,
    check_choice,
    check_consistent_length,
    check_sequence,
    check_tensor,
    check_type,
)
from paperplug_grass.factored import reduce_factor

TARGETS = ("margin", "loss")


def check_model(model: Any, name: str = "model") -> nn.Module:
    """`model` if it is a torch module, else a TypeError naming `name`."""
    return check_type(model, name, nn.Module, what="a torch module")


def labelled_data(
    model: nn.Module, X: Any, y: Any, names: tuple[str, str] = ("X", "y")
) -> tuple[torch.Tensor, torch.Tensor]:
    """(X, y) as tensors of the model's dtype and device, checked against the model: X finite
    and of a shape the model takes (one row is run), y class labels of its outputs. `names`
    are the arguments as the caller wrote them."""
    check_model(model)
    param = next(model.parameters(), None)
    if param is None:
        raise ValueError("model has no parameters to take gradients of")
    X = check_tensor(X, names[0], dtype=param.dtype, device=param.device)
    y = check_tensor(y, names[1], dtype="int", ndim=1, device=param.device)
    check_consistent_length(**{names[0]: X, names[1]: y})
    was = model.training
    model.eval()  # no batch-norm statistics updated, no dropout drawn
    try:
        with torch.no_grad(), argument_errors(names[0], "the input shape the model takes"):
            logits = model(X[:1])
    finally:
        model.train(was)
    classes = logits.shape[-1]
    if int(y.min()) < 0 or int(y.max()) >= classes:
        raise ValueError(
            f"{names[1]} must hold class labels in [0, {classes}) (the model's outputs), got "
            f"[{int(y.min())}, {int(y.max())}]"
        )
    return X, y


def target_values(logits: torch.Tensor, y: torch.Tensor, target: str = "margin") -> torch.Tensor:
    """Per-sample target: TRAK's margin log p_y − log(1 − p_y) (the correct logit minus the
    log-sum-exp of the others), or the cross-entropy loss. logits (B, classes), y (B,)."""
    logits = check_tensor(logits, "logits", ndim=2)
    y = check_tensor(y, "y", dtype="int", ndim=1, device=logits.device)
    check_consistent_length(logits=logits, y=y)
    if int(y.min()) < 0 or int(y.max()) >= logits.shape[1]:
        raise ValueError(f"y must hold class labels in [0, {logits.shape[1]}) (logits' columns)")
    return _target_values(logits, y, check_choice(target, "target", TARGETS))


def _target_values(logits: torch.Tensor, y: torch.Tensor, target: str) -> torch.Tensor:
    """`target_values` unchecked: inside vmap and on what the model gave."""
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

    X, y = labelled_data(model, X, y)
    check_choice(target, "target", TARGETS)

    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}

    def one(p: dict, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        out = functional_call(model, p, (x.unsqueeze(0),))
        return _target_values(out, t.unsqueeze(0), target).squeeze(0)

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
    check_model(model)
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


def _padded(conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """The conv's input padded as the conv pads it (zeros, reflect, replicate, circular;
    "same" puts any extra row or column on the right, as torch)."""
    if x.ndim != 4:
        raise ValueError(f"the conv layer got a {x.ndim}-D input; factoring needs (B, C, H, W)")
    if isinstance(conv.padding, str):  # "valid" or "same"
        totals = [d * (k - 1) if conv.padding == "same" else 0
                  for d, k in zip(conv.dilation, conv.kernel_size, strict=True)]  # fmt: skip
        pads = [side for t in reversed(totals) for side in (t // 2, t - t // 2)]
    else:
        ph, pw = conv.padding
        pads = [pw, pw, ph, ph]
    if not any(pads):
        return x
    return F.pad(x, pads, mode="constant" if conv.padding_mode == "zeros" else conv.padding_mode)


def _input_factor(module: nn.Module, x: torch.Tensor, m: torch.Tensor | None) -> torch.Tensor:
    """(B, T, ·): the layer's input a at each position (a conv's unfolded patch), with a ones
    column for the bias; with a map m, only what the compressor keeps of it — the columns m
    (FactGraSS's mask, gathered from the input, never unfolding all of it) or a @ m (LoGra's
    projection: for a conv, a conv of the input with m as kernel)."""
    B, width = len(x), factor_shape(module)[1] - int(module.bias is not None)
    if isinstance(module, nn.Conv2d):
        x = _padded(module, x)
        (kh, kw), (sh, sw), (dh, dw) = module.kernel_size, module.stride, module.dilation
        if m is None:
            a = F.unfold(x, (kh, kw), dilation=(dh, dw), stride=(sh, sw)).transpose(1, 2)
        elif m.dtype == torch.long:  # column j = (channel, row, column) of the patch
            j = m.to(x.device).clamp(max=width - 1)
            c, r, q = j // (kh * kw), j // kw % kh, j % kw
            h = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
            w = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
            rows = (r * dh).view(-1, 1) + sh * torch.arange(h, device=x.device)
            cols = (q * dw).view(-1, 1) + sw * torch.arange(w, device=x.device)
            a = x[:, c.view(-1, 1, 1), rows.view(len(j), h, 1), cols.view(len(j), 1, w)]
            a = a.reshape(B, len(j), -1).transpose(1, 2)
        else:
            m = m.to(x.device, x.dtype)
            kernel = m[:width].T.reshape(-1, module.in_channels, kh, kw)
            bias = m[width] if module.bias is not None else None
            a = F.conv2d(x, kernel, bias, stride=(sh, sw), dilation=(dh, dw))
            return a.reshape(B, a.shape[1], -1).transpose(1, 2)
    else:  # (B, ..., d) → (B, T, d): one position per sample, or one per token
        a = x.reshape(B, -1, x.shape[-1])
        if m is not None and m.dtype == torch.long:
            a = a[..., m.to(x.device).clamp(max=width - 1)]
        elif m is not None:
            m = m.to(x.device, x.dtype)
            return a @ m[:width] + (m[width] if module.bias is not None else 0)
    if module.bias is None:
        return a
    if m is None:
        return torch.cat([a, torch.ones_like(a[..., :1])], -1)
    return torch.where(m.to(x.device) == width, torch.ones_like(a), a)  # the bias column


def _output_factor(module: nn.Module, d: torch.Tensor, m: torch.Tensor | None) -> torch.Tensor:
    """(B, T, ·): the output gradient δ at each position, kept at m or projected by m."""
    if isinstance(module, nn.Conv2d):
        d = d.reshape(len(d), d.shape[1], -1).transpose(1, 2)
    else:
        d = d.reshape(len(d), -1, d.shape[-1])
    return d if m is None else reduce_factor(d, m)


def _checked_maps(maps: Any, shapes: list[tuple[int, int]]) -> list[tuple[torch.Tensor, ...]]:
    """One (input map, output map) per layer of (d_out, d_in) `shapes`: kept indices (1-D
    integers below d) or a projection (d, ·) of finite reals."""
    pairs = check_sequence(maps, "maps", (tuple, list), what="(input map, output map) pairs")
    if len(pairs) != len(shapes):
        raise ValueError(f"maps must hold one pair per layer ({len(shapes)}), got {len(pairs)}")
    out = []
    for i, (pair, (d_out, d_in)) in enumerate(zip(pairs, shapes, strict=True)):
        if len(pair) != 2:
            raise ValueError(f"maps[{i}] must be a pair (input map, output map), got {len(pair)}")
        checked = []
        for j, (m, d) in enumerate(zip(pair, (d_in, d_out), strict=True)):
            name = f"maps[{i}][{j}]"
            m = check_tensor(m, name, dtype="numeric", ndim=(1, 2))
            if m.ndim == 1:
                m = check_tensor(m, name, dtype="int")
                if int(m.min()) < 0 or int(m.max()) >= d:
                    raise ValueError(f"{name} must hold indices in [0, {d}) of the layer's factor")
            elif not m.is_floating_point() or len(m) != d:
                raise ValueError(
                    f"{name} must be a ({d}, ·) real projection, got {m.dtype} {tuple(m.shape)}"
                )
            checked.append(m)
        out.append(tuple(checked))
    return out


def layer_factors(
    model: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    target: str = "margin",
    layers: Sequence[str] | None = None,
    maps: Sequence[tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """For each linear or conv layer: (a (B, T, d_in), δ (B, T, d_out)), the sample's gradient
    [W | b] being Σ_t δ_t a_tᵀ over its T positions (a conv's output pixels, a sequence's
    tokens, and the positions of every call when a layer runs more than once: shared weights).
    Only layer outputs get gradients: no weight gradient exists. `maps` (a compressor's
    `FactoredCompressor.maps`, one (input map, output map) per layer) keeps only what the
    compressor uses of each factor."""
    X, y = labelled_data(model, X, y)
    check_choice(target, "target", TARGETS)
    modules = dict(model.named_modules())
    names = factored_layers(model) if layers is None else check_sequence(layers, "layers", str)
    for i, name in enumerate(names):
        if name not in modules or refusal(modules[name]) is not None:
            raise ValueError(f"layers[{i}] = {name!r} is not a linear or conv layer of the model")
    if maps is not None:
        maps = _checked_maps(maps, [factor_shape(modules[n]) for n in names])
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
            values = _target_values(logits, y, target)
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
    for index, n in enumerate(names):
        module, parts = modules[n], []
        m_in, m_out = (None, None) if maps is None else maps[index]
        for x, _ in calls[n]:
            parts.append((_input_factor(module, x, m_in), _output_factor(module, deltas[i], m_out)))
            i += 1
        result.append(
            tuple(torch.cat(f, 1) if len(f) > 1 else f[0] for f in zip(*parts, strict=True))
        )
    return result
