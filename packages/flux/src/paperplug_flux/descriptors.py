"""Stage 2, client descriptors (§3.1): compact summaries of a client's data distribution, read
from the *global* model's latents through one shared, data-free projection.

The descriptor is [mean(Pz), std(Pz)] for the marginal P(X), followed by one [mean, std] block
per label for P(X|Y) (filled with -1 where the client has no sample of that label). For
diagonal Gaussians the Euclidean distance between two [mu, sigma] blocks *is* the
2-Wasserstein distance, so the server's Euclidean clustering compares distributions.
Optional Laplace noise makes the descriptor differentially private (§3.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from paperplug.checks import check_array, check_data, check_scalar, check_type

MISSING = -1.0  # fill value of a label block the client has no sample of


@dataclass(frozen=True)
class Projection:
    """A linear map z -> (z - mean) @ components.T, shared by every client without
    communication: it depends only on (latent_dim, n_components, max_latent, seed)."""

    mean: np.ndarray
    components: np.ndarray

    def __call__(self, z: np.ndarray | torch.Tensor) -> np.ndarray:
        z = (
            z.detach().cpu().numpy()
            if isinstance(z, torch.Tensor)
            else np.asarray(z, dtype=np.float64)
        )
        if z.ndim != 2 or z.shape[1] != self.mean.shape[0]:
            raise ValueError(f"latents must have shape (n, {self.mean.shape[0]}), got {z.shape}")
        return (z.astype(np.float64) - self.mean) @ self.components.T


@lru_cache(maxsize=32)
def data_free_projection(
    latent_dim: int,
    n_components: int,
    *,
    max_latent: float = 1.0,
    n_points: int = 200,
    seed: int = 1,
) -> Projection:
    """PCA fitted on `n_points` points drawn U(0, max_latent)^latent_dim with a fixed seed: the
    same map on every client, learned from no client's data (the official code: 200 points,
    seed 1, n_components = number of classes). Cached: every client of a run asks for it."""
    for name, v in (
        ("latent_dim", latent_dim),
        ("n_components", n_components),
        ("n_points", n_points),
    ):
        check_scalar(v, name, "int", low=1)
    if n_components > min(latent_dim, n_points):
        raise ValueError(
            f"n_components={n_components} exceeds min(latent_dim, n_points)={min(latent_dim, n_points)}"
        )
    check_scalar(max_latent, "max_latent", low=0, inclusive="neither")
    check_scalar(seed, "seed", "int", low=0)
    points = np.random.default_rng(seed).uniform(0.0, max_latent, size=(n_points, latent_dim))
    mean = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - mean, full_matrices=False)
    return Projection(mean=mean, components=vt[:n_components].copy())


def descriptor_size(n_classes: int, n_components: int, *, labelled: bool = True) -> int:
    """Floats in one descriptor: 2·d_p for the marginal, plus 2·d_p per label when labelled."""
    check_scalar(n_classes, "n_classes", "int", low=1)
    check_scalar(n_components, "n_components", "int", low=1)
    check_type(labelled, "labelled", bool)
    return 2 * n_components * (1 + (n_classes if labelled else 0))


def client_descriptor(
    z: np.ndarray | torch.Tensor,
    y: np.ndarray | torch.Tensor | None,
    projection: Projection,
    n_classes: int,
    *,
    noise_scale: float = 0.0,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The descriptor of one client from its latents `z` (and labels `y`; None for an unseen,
    unlabelled client, who sends the marginal block only).

    `noise_scale` > 0 adds Laplace(0, noise_scale) noise to every entry (ε-DP with
    ε = sensitivity / noise_scale); it needs `rng`."""
    check_type(projection, "projection", Projection, what="a Projection (data_free_projection)")
    check_scalar(n_classes, "n_classes", "int", low=1)
    noise_scale = check_scalar(noise_scale, "noise_scale", low=0)
    if rng is not None:
        check_type(rng, "rng", np.random.Generator)
    z = check_data(z, "z", ndim=2)
    if z.shape[1] != projection.mean.shape[0]:
        raise ValueError(
            f"z must have shape (n, {projection.mean.shape[0]}) (the projection's latent "
            f"columns), got {tuple(z.shape)}"
        )
    p = projection(z)
    if len(p) == 0:
        raise ValueError("a descriptor needs at least one sample")
    blocks = [p.mean(axis=0), p.std(axis=0)]
    if y is not None:
        y = check_array(y, "y", dtype="int", ndim=1)
        if len(y) and (y.min() < 0 or y.max() >= n_classes):
            raise ValueError(f"y must hold labels in [0, n_classes={n_classes}), got {y.max()}")
        if y.shape != (len(p),):
            raise ValueError(f"y must have one label per latent row ({len(p)}), got {y.shape}")
        d_p = p.shape[1]
        for c in range(n_classes):
            rows = p[y == c]
            if len(rows):
                blocks += [rows.mean(axis=0), rows.std(axis=0)]
            else:
                blocks += [np.full(d_p, MISSING), np.full(d_p, MISSING)]
    desc = np.concatenate(blocks)
    if noise_scale > 0:
        if rng is None:
            raise ValueError("noise_scale > 0 needs an rng (np.random.default_rng(seed))")
        desc = desc + rng.laplace(0.0, noise_scale, size=desc.shape)
    return desc


def wasserstein2_diagonal(
    mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray
) -> float:
    """Closed-form 2-Wasserstein distance between N(mu1, diag(sigma1²)) and N(mu2, diag(sigma2²)):
    sqrt(||mu1 - mu2||² + ||sigma1 - sigma2||²)."""
    mu1 = check_array(mu1, "mu1", ndim=1)
    shape = (len(mu1),)
    mu2 = check_array(mu2, "mu2", shape=shape)
    sigma1, sigma2 = (
        check_array(s, n, shape=shape) for s, n in ((sigma1, "sigma1"), (sigma2, "sigma2"))
    )
    for name, sigma in (("sigma1", sigma1), ("sigma2", sigma2)):
        if (sigma < 0).any():
            raise ValueError(f"{name} must hold standard deviations (>= 0)")
    return float(np.sqrt(np.sum((mu1 - mu2) ** 2) + np.sum((sigma1 - sigma2) ** 2)))
