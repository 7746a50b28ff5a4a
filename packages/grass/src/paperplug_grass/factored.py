"""Compressors that act on the factors of a layer's per-sample gradient G = Σ_t δ_t a_tᵀ (paper
§3.3; a linear layer's tokens or a conv's output positions t, a conv's a its unfolded input
patch), never forming G: LoGra projects both factors (P_outᵀ G P_in) and FactGraSS masks
both factors to k₁′ and k₂′ entries, takes their outer product and sketches it with SJLT to k.
The total k is split equally between the layers."""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch

from paperplug.checks import check_choice, check_scalar, check_sequence, check_tensor, check_type
from paperplug_grass.compressors import SJLT

FACTORED = ("logra", "factgrass")


def _split(k: int, layers: int) -> int:
    per = k // layers
    if per < 1:
        raise ValueError(f"k = {k} is smaller than the number of layers ({layers})")
    return per


def _logra_sides(per: int) -> tuple[int, int]:
    """LoGra's k₁ × k₂ for one layer's share: ⌊√k_l⌋ × ⌊k_l/⌊√k_l⌋⌋."""
    k1 = max(1, math.isqrt(per))
    return k1, per // k1


def exact_k(kind: str, k: int, layers: int) -> int:
    """The features `kind` computes when asked for k over `layers` layers (k split equally,
    LoGra's share as k₁ × k₂): asked for this k, it computes exactly k (and does not warn)."""
    per = _split(k, layers)
    if kind == "logra":
        k1, k2 = _logra_sides(per)
        per = k1 * k2
    return per * layers


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
        """Draw each layer's maps; warns when the layers' features do not add up to k (k not
        a multiple of the layers, or LoGra's k₁ × k₂ = ⌊√k_l⌋ × ⌊k_l/⌊√k_l⌋⌋ short of k_l)."""
        shapes = _checked_shapes(shapes)
        gen = torch.Generator().manual_seed(self.seed)
        per = _split(self.k, len(shapes))
        self.layers, self.sizes = [], []
        for d_out, d_in in shapes:
            if self.kind == "logra":
                k1, k2 = _logra_sides(per)
                self.sizes.append(k1 * k2)
                self.layers.append(
                    {
                        "out": torch.randn(d_out, k1, generator=gen) / math.sqrt(k1),
                        "in": torch.randn(d_in, k2, generator=gen) / math.sqrt(k2),
                    }
                )
            else:
                side = max(1, round(math.sqrt(self.blowup * per)))
                k1, k2 = min(side, d_out), min(side, d_in)
                self.sizes.append(per)
                self.layers.append(
                    {
                        "out": torch.randperm(d_out, generator=gen)[:k1].sort().values,
                        "in": torch.randperm(d_in, generator=gen)[:k2].sort().values,
                        "sketch": SJLT(k1 * k2, per, gen),
                    }
                )
        self.shapes = list(shapes)
        if sum(self.sizes) != self.k:
            warnings.warn(
                f"{self.kind} gives {sum(self.sizes)} features, not k={self.k}: k is split into "
                f"{len(shapes)} layers of {self.sizes} features"
                + (f" (k/layers = {per} projected as k1 × k2)" if self.kind == "logra" else "")
                + f"; ask for k={sum(self.sizes)} to get exactly what is computed",
                stacklevel=2,
            )
        return self

    @property
    def blocks(self) -> list[int]:
        """The number of features of each layer, in output order (each layer's block)."""
        if not hasattr(self, "layers"):
            raise RuntimeError("call fit(shapes) before blocks")
        return list(self.sizes)

    @property
    def maps(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per layer, what is kept of the input and output factors: FactGraSS's mask indices,
        LoGra's projections (`gradients.layer_factors(..., maps=)` applies them)."""
        if not hasattr(self, "layers"):
            raise RuntimeError("call fit(shapes) before maps")
        return [(layer["in"], layer["out"]) for layer in self.layers]

    def compress(
        self, factors: list[tuple[torch.Tensor, torch.Tensor]], *, reduced: bool = False
    ) -> torch.Tensor:
        """(B, k) features of the layers' factors (a, δ); `reduced`: the factors are already
        masked or projected by `maps`."""
        if not hasattr(self, "layers"):
            raise RuntimeError("call fit(shapes) before compress")
        check_type(reduced, "reduced", bool)
        factors = self._checked_factors(factors, reduced)
        parts = []
        for (a, d), layer in zip(factors, self.layers, strict=True):
            if not reduced:
                a, d = reduce_factor(a, layer["in"]), reduce_factor(d, layer["out"])
            small = torch.einsum("bto,bti->boi", d, a).flatten(1)
            parts.append(small if self.kind == "logra" else layer["sketch"](small))
        return torch.cat(parts, 1)

    def _checked_factors(self, factors: Any, reduced: bool) -> list[tuple[torch.Tensor, ...]]:
        """Each layer's (a (B, T, d_in), δ (B, T, d_out)), finite, one batch; of the maps'
        widths when `reduced`."""
        pairs = check_sequence(factors, "factors", (tuple, list), what="(a, δ) pairs")
        if len(pairs) != len(self.layers):
            raise ValueError(
                f"factors must hold one (a, δ) pair per layer ({len(self.layers)}), got "
                f"{len(pairs)}"
            )
        out, batch = [], None
        for i, (pair, layer, (d_out, d_in)) in enumerate(
            zip(pairs, self.layers, self.shapes, strict=True)
        ):
            if len(pair) != 2:
                raise ValueError(f"factors[{i}] must be a pair (a, δ), got {len(pair)} items")
            widths = (d_in, d_out)
            if reduced:
                maps = (layer["in"], layer["out"])
                widths = tuple(len(m) if m.dtype == torch.long else m.shape[1] for m in maps)
            checked = []
            for j, (v, width) in enumerate(zip(pair, widths, strict=True)):
                v = check_tensor(v, f"factors[{i}][{j}]", shape=(batch, None, width))
                batch = len(v) if batch is None else batch
                checked.append(v)
            if checked[0].shape[1] != checked[1].shape[1]:
                raise ValueError(f"factors[{i}]: a and δ must have one position count each")
            out.append(tuple(checked))
        return out


def _checked_shapes(shapes: Any) -> list[tuple[int, int]]:
    """Each layer's (d_out, d_in) as positive ints."""
    out = []
    for i, shape in enumerate(check_sequence(shapes, "shapes", (tuple, list), what="pairs")):
        if len(shape) != 2:
            raise ValueError(f"shapes[{i}] must be a pair (d_out, d_in), got {shape!r}")
        out.append(tuple(check_scalar(d, f"shapes[{i}]", "int", low=1) for d in shape))
    return out


def reduce_factor(v: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """A factor's last dimension kept at the indices m (a mask) or projected by m, which
    follows the factor's dtype and device."""
    if m.dtype == torch.long:
        return v[..., m.to(v.device)]
    return v @ m.to(v.device, v.dtype)
