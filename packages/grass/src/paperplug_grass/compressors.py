"""Compressors of flat per-sample gradients g ∈ R^p to φ ∈ R^k behind one interface (paper §3):
dense Gaussian / Rademacher JL (O(pk)), SJLT (CountSketch: one random bucket and sign per
coordinate, O(nnz)), random mask (RM), selective mask (SM, learned), and GraSS — a mask to
k′ = blowup·k coordinates, then SJLT k′ → k: O(k′) per sample, independent of p."""

from __future__ import annotations

import math

import torch

from paperplug.checks import check_choice, check_scalar, check_tensor, check_type

KINDS = ("gauss", "rademacher", "sjlt", "rm", "sm", "grass", "grass-sm")


class SJLT:
    """CountSketch R^n → R^k: coordinate j goes to bucket h(j) with sign s(j) (E‖Sv‖² = ‖v‖²)."""

    def __init__(self, n: int, k: int, generator: torch.Generator) -> None:
        self.n, self.k = check_scalar(n, "n", "int", low=1), check_scalar(k, "k", "int", low=1)
        check_type(generator, "generator", torch.Generator)
        self.bucket = torch.randint(k, (n,), generator=generator)
        self.sign = torch.randint(2, (n,), generator=generator).float() * 2 - 1

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(*v.shape[:-1], self.k, dtype=v.dtype, device=v.device)
        return out.index_add_(-1, self.bucket.to(v.device), v * self.sign.to(v.device, v.dtype))


class Compressor:
    """`fit(p)` draws the projection for gradients of dimension p (SM also needs sample
    gradients: `fit(p, sample=G)`); `compress(G (B, p)) → (B, k)`."""

    def __init__(
        self,
        kind: str = "grass",
        k: int = 1024,
        *,
        blowup: int = 4,
        seed: int = 0,
        sm_steps: int = 200,
        sm_l1: float = 1e-4,
    ) -> None:
        self.kind = check_choice(kind, "kind", KINDS)
        self.k = check_scalar(k, "k", "int", low=1)
        self.blowup = check_scalar(blowup, "blowup", "int", low=1)
        self.seed = check_scalar(seed, "seed", "int", low=0)
        self.sm_steps = check_scalar(sm_steps, "sm_steps", "int", low=1)
        self.sm_l1 = check_scalar(sm_l1, "sm_l1", low=0)
        self.train_seconds = 0.0  # SM's own training cost, reported

    def fit(self, p: int, sample: torch.Tensor | None = None) -> Compressor:
        check_scalar(p, "p", "int", low=1)
        if sample is not None:
            sample = check_tensor(sample, "sample", ndim=2, shape=(None, p))
        gen = torch.Generator().manual_seed(self.seed)
        self.p = p
        width = min(self.blowup * self.k, p) if self.kind.startswith("grass") else self.k
        if self.kind in ("gauss", "rademacher"):
            if self.kind == "gauss":
                self.matrix = torch.randn(p, self.k, generator=gen) / math.sqrt(self.k)
            else:
                self.matrix = (
                    torch.randint(2, (p, self.k), generator=gen).float() * 2 - 1
                ) / math.sqrt(self.k)
        elif self.kind == "sjlt":
            self.sketch = SJLT(p, self.k, gen)
        elif self.kind in ("rm", "grass"):
            self.index = torch.randperm(p, generator=gen)[: min(width, p)].sort().values
        else:  # "sm", "grass-sm": a learned selective mask
            if sample is None:
                raise ValueError(f"kind={self.kind!r} learns its mask: fit(p, sample=gradients)")
            from paperplug_grass.selective_mask import learn_selective_mask

            self.index, self.train_seconds = learn_selective_mask(
                sample, min(width, p), steps=self.sm_steps, l1=self.sm_l1, seed=self.seed
            )
        if self.kind.startswith("grass"):
            self.sketch = SJLT(len(self.index), self.k, gen)
        return self

    def compress(self, G: torch.Tensor) -> torch.Tensor:
        if not hasattr(self, "p"):
            raise RuntimeError("call fit(p) before compress")
        # shape only: a finiteness scan is O(p) per sample, what GraSS exists to avoid; the
        # (B, k) output is scanned instead (a NaN in a coordinate the mask drops is never read)
        G = check_tensor(G, "G", shape=(None, self.p), min_samples=0, finite=False)
        if self.kind in ("gauss", "rademacher"):
            out = G @ self.matrix.to(G.device, G.dtype)
        elif self.kind == "sjlt":
            out = self.sketch(G)
        else:
            out = G[:, self.index.to(G.device)]
            out = self.sketch(out) if self.kind.startswith("grass") else out
        if not bool(torch.isfinite(out).all()):
            raise ValueError("G holds NaN or infinite values in the coordinates compressed")
        return out
