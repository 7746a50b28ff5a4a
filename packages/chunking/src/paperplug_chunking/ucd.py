"""Unsupervised chunk discovery (UCD, paper §3.3): with no labels, learn K prototype
directions C (K × neurons) that maximise each activation's best cosine match,
loss = −mean_x max_k cos(C_k, x), by Adam on minibatches (spherical k-means by SGD; paper:
lr 1e-2, batch 64, 100 epochs, one model per layer). Prototypes that win no activation in an
epoch are dead: they are re-initialised on the worst-matched activations and counted.

Two additions of ours (the paper's run is `n_init=1, split=False`): a prototype that still
wins data but covers two modes never dies, so after each epoch the prototype whose removal
costs least (its activations' loss moving to their second-best prototype) is moved onto the
worst-matched activation of the most dispersed one whenever that removal costs less than
half the dispersion it addresses; and `n_init` restarts keep the best objective."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperplug.checks import check_array, check_device, check_is_fitted, check_scalar, check_type


def cosine_objective(X: Any, prototypes: Any) -> float:
    """mean_x max_k cos(C_k, x): what UCD maximises (and spherical k-means too)."""
    X = check_array(X, "X", ndim=2)
    prototypes = check_array(prototypes, "prototypes", ndim=2)
    if X.shape[1] != prototypes.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but prototypes {prototypes.shape[1]}")
    X = F.normalize(torch.as_tensor(X), dim=1)
    C = F.normalize(torch.as_tensor(prototypes, dtype=torch.float64), dim=1)
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
        n_init: int = 1,
        split: bool = True,
        seed: int = 0,
        device: str | torch.device = "cpu",
        progress: bool = False,
    ) -> None:
        self.n_chunks, self.lr, self.batch_size, self.epochs = n_chunks, lr, batch_size, epochs
        self.reinit_dead, self.n_init, self.split = reinit_dead, n_init, split
        self.seed, self.device, self.progress = seed, device, progress
        self._check_params()

    def _check_params(self) -> None:
        check_scalar(self.n_chunks, "n_chunks", "int", low=1)
        check_scalar(self.batch_size, "batch_size", "int", low=1)
        check_scalar(self.epochs, "epochs", "int", low=1)
        check_scalar(self.n_init, "n_init", "int", low=1)
        check_scalar(self.lr, "lr", low=0, inclusive="neither")
        check_scalar(self.seed, "seed", "int", low=0)
        check_device(self.device)
        for flag in ("reinit_dead", "split", "progress"):
            check_type(getattr(self, flag), flag, bool)

    def fit(self, X: Any) -> UnsupervisedChunkDiscovery:
        X = check_array(X, "X", ndim=2)
        self._check_params()
        K = check_scalar(self.n_chunks, "n_chunks", "int", low=1, high=len(X))
        epochs, n_init = self.epochs, self.n_init
        data = F.normalize(torch.as_tensor(X, dtype=torch.float32), dim=1).to(self.device)
        gen = torch.Generator().manual_seed(self.seed)
        best = None
        for _ in range(n_init):  # one generator: restart r continues where r - 1 stopped
            run = self._run(data, K, epochs, gen)
            if best is None or run["objective"] > best["objective"]:
                best = run
        self.prototypes_ = best["prototypes"]
        self.history_, self.objective_ = best["history"], best["objective"]
        self.n_reinitialised_, self.n_split_ = best["n_reinitialised"], best["n_split"]
        return self

    def _run(self, data: torch.Tensor, K: int, epochs: int, gen: torch.Generator) -> dict:
        """One optimisation from random prototypes: its prototypes, objective and counts."""
        protos = torch.randn(K, data.shape[1], generator=gen).to(self.device).requires_grad_(True)
        opt = torch.optim.Adam([protos], lr=self.lr)
        n_reinitialised, n_split, history = 0, 0, []
        from paperplug.harness import progress

        for epoch in progress(range(epochs), desc="UCD", disable=not self.progress):
            wins = torch.zeros(K, dtype=torch.bool, device=self.device)
            total = 0.0
            for idx in torch.randperm(len(data), generator=gen).split(self.batch_size):
                sim = data[idx] @ F.normalize(protos, dim=1).T
                top = sim.max(1)
                loss = -top.values.mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                wins[top.indices] = True
                total -= float(loss.detach()) * len(idx)
            history.append(total / len(data))
            if epoch == epochs - 1:
                break
            dead = (~wins).nonzero().ravel()
            with torch.no_grad():
                if self.reinit_dead and len(dead):
                    fit = (data @ F.normalize(protos, dim=1).T).max(1).values
                    self._move(protos, opt, dead, data[fit.argsort()[: len(dead)]])
                    n_reinitialised += len(dead)
                elif self.split and K > 1 and (move := self._split_move(data, protos)):
                    self._move(protos, opt, *move)
                    n_split += 1
        with torch.no_grad():
            unit = F.normalize(protos, dim=1)
            objective = float((data @ unit.T).max(1).values.double().mean())
        prototypes = unit.cpu().numpy().astype(np.float64)
        return {"prototypes": prototypes, "objective": objective, "history": history,
                "n_reinitialised": n_reinitialised, "n_split": n_split}  # fmt: skip

    @staticmethod
    def _split_move(data: torch.Tensor, protos: torch.Tensor) -> tuple | None:
        """(prototype to move, where) when the cheapest prototype to remove costs less than
        half the dispersion of the most dispersed one; else None."""
        sim = data @ F.normalize(protos, dim=1).T
        two = sim.topk(2, dim=1)
        owner, first, second = two.indices[:, 0], two.values[:, 0], two.values[:, 1]
        K = protos.shape[0]
        removal = torch.zeros(K, dtype=sim.dtype).index_add_(0, owner, first - second)
        dispersion = torch.zeros(K, dtype=sim.dtype).index_add_(0, owner, 1 - first)
        cheap, spread = int(removal.argmin()), int(dispersion.argmax())
        if cheap == spread or not removal[cheap] < 0.5 * dispersion[spread]:
            return None
        members = (owner == spread).nonzero().ravel()
        far = members[first[members].argmin()]
        return torch.tensor([cheap]), data[far][None]

    @staticmethod
    def _move(protos: torch.Tensor, opt: torch.optim.Optimizer, rows: Any, to: Any) -> None:
        """Prototypes `rows` set to the directions `to`, with fresh Adam moments."""
        protos[rows] = to
        for state in opt.state.values():
            state["exp_avg"][rows] = 0
            state["exp_avg_sq"][rows] = 0

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "prototypes_")
        X = check_array(X, "X", ndim=2)
        if X.shape[1] != self.prototypes_.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} columns, the prototypes {self.prototypes_.shape[1]}"
            )
        return (
            X / np.linalg.norm(X, axis=1, keepdims=True).clip(1e-12) @ self.prototypes_.T
        ).argmax(1)

    def score(self, X: Any) -> float:
        """The objective mean_x max_k cos on X."""
        return cosine_objective(X, self.prototypes_)
