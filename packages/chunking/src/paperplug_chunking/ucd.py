"""Unsupervised chunk discovery (UCD, paper §3.3): with no labels, learn K prototype
directions C (K × neurons) that maximise each activation's best cosine match,
loss = −mean_x max_k cos(C_k, x), by Adam on minibatches (spherical k-means by SGD; paper:
lr 1e-2, batch 64, 100 epochs, one model per layer). Prototypes that win no activation in an
epoch are dead: they are re-initialised on the worst-matched activations and counted."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperplug.checks import check_array, check_scalar


def cosine_objective(X: Any, prototypes: Any) -> float:
    """mean_x max_k cos(C_k, x): what UCD maximises (and spherical k-means too)."""
    X = F.normalize(torch.as_tensor(check_array(X, "X", ndim=2)), dim=1)
    C = F.normalize(torch.as_tensor(np.asarray(prototypes, dtype=np.float64)), dim=1)
    return float((X @ C.T).max(1).values.mean())


class UnsupervisedChunkDiscovery:
    """Fit K prototypes; `predict` gives each activation's chunk (its best-matching
    prototype). `n_reinitialised_` counts dead-prototype re-initialisations."""

    def __init__(
        self,
        n_chunks: int = 16,
        lr: float = 1e-2,
        batch_size: int = 64,
        epochs: int = 100,
        reinit_dead: bool = True,
        seed: int = 0,
        device: str | torch.device = "cpu",
        progress: bool = False,
    ) -> None:
        self.n_chunks, self.lr, self.batch_size, self.epochs = n_chunks, lr, batch_size, epochs
        self.reinit_dead, self.seed, self.device, self.progress = (
            reinit_dead,
            seed,
            device,
            progress,
        )

    def fit(self, X: Any) -> UnsupervisedChunkDiscovery:
        X = check_array(X, "X", ndim=2)
        K = check_scalar(self.n_chunks, "n_chunks", "int", low=1, high=len(X))
        check_scalar(self.batch_size, "batch_size", "int", low=1)
        epochs = check_scalar(self.epochs, "epochs", "int", low=1)
        check_scalar(self.lr, "lr", low=0, inclusive="neither")
        gen = torch.Generator().manual_seed(self.seed)
        data = F.normalize(torch.as_tensor(X, dtype=torch.float32), dim=1).to(self.device)
        protos = torch.randn(K, X.shape[1], generator=gen).to(self.device).requires_grad_(True)
        opt = torch.optim.Adam([protos], lr=self.lr)
        self.n_reinitialised_, self.history_ = 0, []
        from paperplug.harness import progress

        for epoch in progress(range(epochs), desc="UCD", disable=not self.progress):
            wins = torch.zeros(K, dtype=torch.bool, device=self.device)
            total = 0.0
            for idx in torch.randperm(len(data), generator=gen).split(self.batch_size):
                sim = data[idx] @ F.normalize(protos, dim=1).T
                best = sim.max(1)
                loss = -best.values.mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                wins[best.indices] = True
                total -= float(loss.detach()) * len(idx)
            self.history_.append(total / len(data))
            dead = (~wins).nonzero().ravel()
            if self.reinit_dead and len(dead) and epoch < epochs - 1:
                with torch.no_grad():
                    fit = (data @ F.normalize(protos, dim=1).T).max(1).values
                    worst = fit.argsort()[: len(dead)]
                    protos[dead] = data[worst]
                    for state in opt.state.values():  # fresh moments for re-initialised rows
                        state["exp_avg"][dead] = 0
                        state["exp_avg_sq"][dead] = 0
                self.n_reinitialised_ += len(dead)
        self.prototypes_ = F.normalize(protos.detach(), dim=1).cpu().numpy().astype(np.float64)
        return self

    def predict(self, X: Any) -> np.ndarray:
        X = check_array(X, "X", ndim=2)
        return (
            X / np.linalg.norm(X, axis=1, keepdims=True).clip(1e-12) @ self.prototypes_.T
        ).argmax(1)

    def score(self, X: Any) -> float:
        """The objective mean_x max_k cos on X."""
        return cosine_objective(X, self.prototypes_)
