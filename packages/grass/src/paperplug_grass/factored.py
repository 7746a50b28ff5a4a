"""Compressors that act on the factors of a layer's per-sample gradient G = Σ_t δ_t a_tᵀ (paper
§3.3; a linear layer's tokens or a conv's output positions t, a conv's a its unfolded input
patch), never forming G: LoGra projects both factors (P_outᵀ G P_in) and FactGraSS masks
both factors to k₁′ and k₂′ entries, takes their outer product and sketches it with SJLT to k.
The total k is split equally between the layers."""

from __future__ import annotations

import math

import torch

from paperplug.checks import check_choice, check_scalar
from paperplug_grass.compressors import SJLT

FACTORED = ("logra", "factgrass")


def _split(k: int, layers: int) -> int:
    per = k // layers
    if per < 1:
        raise ValueError(f"k = {k} is smaller than the number of layers ({layers})")
    return per


class FactoredCompressor:
    """`fit(shapes)` with each layer's (d_out, d_in) (`gradients.factor_shape`);
    `compress(factors) → (B, k)`."""

    def __init__(
        self, kind: str = "factgrass", k: int = 1024, *, blowup: int = 4, seed: int = 0
    ) -> None:
        self.kind = check_choice(kind, "kind", FACTORED)
        self.k = check_scalar(k, "k", "int", low=1)
        self.blowup = check_scalar(blowup, "blowup", "int", low=1)
        self.seed = check_scalar(seed, "seed", "int", low=0)

    def fit(self, shapes: list[tuple[int, int]]) -> FactoredCompressor:
        gen = torch.Generator().manual_seed(self.seed)
        per = _split(self.k, len(shapes))
        self.layers = []
        for d_out, d_in in shapes:
            if self.kind == "logra":
                k1 = max(1, math.isqrt(per))
                k2 = per // k1
                self.layers.append(
                    {
                        "out": torch.randn(d_out, k1, generator=gen) / math.sqrt(k1),
                        "in": torch.randn(d_in, k2, generator=gen) / math.sqrt(k2),
                    }
                )
            else:
                side = max(1, round(math.sqrt(self.blowup * per)))
                k1, k2 = min(side, d_out), min(side, d_in)
                self.layers.append(
                    {
                        "out": torch.randperm(d_out, generator=gen)[:k1].sort().values,
                        "in": torch.randperm(d_in, generator=gen)[:k2].sort().values,
                        "sketch": SJLT(k1 * k2, per, gen),
                    }
                )
        self.shapes = list(shapes)
        return self

    @property
    def blocks(self) -> list[int]:
        """The number of features of each layer, in output order (each layer's block)."""
        if not hasattr(self, "layers"):
            raise RuntimeError("call fit(shapes) before blocks")
        return [_split(self.k, len(self.layers))] * len(self.layers)

    def compress(self, factors: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        if not hasattr(self, "layers"):
            raise RuntimeError("call fit(shapes) before compress")
        if len(factors) != len(self.layers):
            raise ValueError(f"expected factors of {len(self.layers)} layers, got {len(factors)}")
        parts = []
        for (a, d), layer in zip(factors, self.layers, strict=True):
            if self.kind == "logra":  # the projections follow the factors' dtype and device
                p_out, p_in = (layer[s].to(d.device, d.dtype) for s in ("out", "in"))
                small = torch.einsum("bto,bti->boi", d @ p_out, a @ p_in)
                parts.append(small.flatten(1))
            else:
                out, inp = layer["out"].to(d.device), layer["in"].to(d.device)
                small = torch.einsum("bto,bti->boi", d[..., out], a[..., inp])
                parts.append(layer["sketch"](small.flatten(1)))
        return torch.cat(parts, 1)
