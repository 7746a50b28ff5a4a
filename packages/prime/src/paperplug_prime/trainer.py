"""The Trainer component: a masked diffusion model over token sequences with Prime's partial
masking (ℓ sub-tokens per token; ℓ = 1 is plain MDM): fit, NELBO in bits per token, Euler
sampling with idle-step counting, save and load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperplug import History, seeded_torch
from paperplug.harness import progress
from paperplug_prime.denoiser import PrimeDenoiser
from paperplug_prime.nelbo import antithetic_times, bits_per_token, nelbo_loss
from paperplug_prime.sampler import euler_sample
from paperplug_prime.schedule import Schedule
from paperplug_prime.subtokenizer import Subtokenizer

ARCHITECTURE = ("vocab_size", "seq_len", "ell", "shuffle", "schedule", "backbone", "d_embed",
                "hidden", "layers", "dropout", "seed")  # fmt: skip


class PrimeMDM:
    """fit(tokens (N, L) ints in [0, vocab_size)) trains the denoiser on the NELBO;
    `nelbo(tokens)` is the test bound in bits per token; `sample(n, nfe)` returns tokens and the
    idle-step fraction. `vocab_size`/`seq_len` default to the data's."""

    def __init__(self, vocab_size: int | None = None, seq_len: int | None = None, *, ell: int = 2,
                 shuffle: bool = False, schedule: str = "linear", backbone: str = "mlp",
                 d_embed: int = 16, hidden: int = 256, layers: int = 2, dropout: float = 0.1,
                 steps: int = 2000, batch_size: int = 128, lr: float = 1e-3, seed: int = 0,
                 device: str = "cpu", progress: bool = True) -> None:  # fmt: skip
        self.vocab_size, self.seq_len, self.ell, self.shuffle = vocab_size, seq_len, ell, shuffle
        self.schedule, self.backbone, self.d_embed, self.hidden = (
            schedule,
            backbone,
            d_embed,
            hidden,
        )
        self.layers, self.dropout, self.steps, self.batch_size = layers, dropout, steps, batch_size
        self.lr, self.seed, self.device, self.progress = lr, seed, device, progress

    def _tokens(self, tokens: Any) -> torch.Tensor:
        x = torch.as_tensor(np.asarray(tokens.cpu() if hasattr(tokens, "cpu") else tokens))
        if x.ndim != 2 or x.shape[0] < 1:
            raise ValueError(
                f"tokens must be a (sequences, length) array, got shape {tuple(x.shape)}"
            )
        if x.is_floating_point() and not torch.equal(x, x.round()):
            raise TypeError("tokens must be integers")
        x = x.long()
        if hasattr(self, "model_"):
            if x.shape[1] != self.seq_len_:
                raise ValueError(f"sequences must have length {self.seq_len_}, got {x.shape[1]}")
            if x.min() < 0 or x.max() >= self.vocab_size_:
                raise ValueError(f"tokens must lie in [0, {self.vocab_size_})")
        return x

    def _build(self) -> None:
        self.sub_ = Subtokenizer(self.vocab_size_, self.ell, shuffle=self.shuffle, seed=self.seed)
        self.schedule_ = Schedule(self.schedule)
        with seeded_torch(self.seed):
            self.model_ = PrimeDenoiser(self.vocab_size_, self.seq_len_, self.ell, self.sub_.base,
                                        backbone=self.backbone, d_embed=self.d_embed,
                                        hidden=self.hidden, layers=self.layers,
                                        dropout=self.dropout).to(self.device)  # fmt: skip

    def fit(self, tokens: Any) -> PrimeMDM:
        x = self._tokens(tokens)
        if x.min() < 0:
            raise ValueError("tokens must be >= 0")
        self.vocab_size_ = int(self.vocab_size or int(x.max()) + 1)
        if x.max() >= self.vocab_size_:
            raise ValueError(f"tokens must lie in [0, vocab_size={self.vocab_size_})")
        self.seq_len_ = int(self.seq_len or x.shape[1])
        if x.shape[1] != self.seq_len_:
            raise ValueError(f"sequences must have length {self.seq_len_}, got {x.shape[1]}")
        for name in ("steps", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        self._build()
        x = x.to(self.device)
        gen = torch.Generator(device=self.device).manual_seed(self.seed)
        with seeded_torch(self.seed):  # dropout draws from torch's generator: seeded, restored
            self._train(x, gen)
        return self

    def _train(self, x: torch.Tensor, gen: torch.Generator) -> None:
        optimizer = torch.optim.Adam(self.model_.parameters(), lr=self.lr)
        self.history_ = History()
        self.model_.train()
        steps = range(1, self.steps + 1)
        for step in progress(steps, f"Prime ℓ={self.ell}") if self.progress else steps:
            idx = torch.randint(len(x), (self.batch_size,), generator=gen, device=self.device)
            t = torch.rand(self.batch_size, generator=gen, device=self.device).clamp_min(1e-3)
            loss = nelbo_loss(self.model_, self.sub_, self.schedule_, x[idx], t, gen).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 50 == 0 or step == self.steps:
                self.history_.log(step=step, nelbo_bits=loss.item() / (self.seq_len_ * np.log(2)))
        self.model_.eval()

    def _fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise RuntimeError("call fit() (or load()) first")

    @torch.no_grad()
    def nelbo(self, tokens: Any, n_t: int = 128, seed: int = 0, batch_size: int = 256) -> float:
        """The NELBO in bits per token on an antithetic grid of `n_t` times (an upper bound on
        −log₂ p(x) per token)."""
        self._fitted()
        x = self._tokens(tokens).to(self.device)
        gen = torch.Generator(device=self.device).manual_seed(seed)
        total = torch.zeros(len(x), device=self.device)
        for t in antithetic_times(n_t, gen, self.device):
            for chunk in torch.split(torch.arange(len(x), device=self.device), batch_size):
                tt = t.expand(len(chunk))
                total[chunk] += nelbo_loss(
                    self.model_, self.sub_, self.schedule_, x[chunk], tt, gen
                )
        return bits_per_token(total / n_t, self.seq_len_)

    def sample(self, n: int, nfe: int = 64, seed: int = 0) -> tuple[np.ndarray, float]:
        """(n, L) sampled tokens and the idle-step fraction of the Euler sampler."""
        self._fitted()
        if n < 1 or nfe < 1:
            raise ValueError(f"n and nfe must be >= 1, got n={n}, nfe={nfe}")
        gen = torch.Generator(device=self.device).manual_seed(seed)
        tokens, idle = euler_sample(self.model_, self.sub_, self.schedule_, n, self.seq_len_, nfe,
                                    gen, self.device)  # fmt: skip
        return tokens.cpu().numpy(), idle

    def save(self, path: str | os.PathLike[str]) -> Path:
        self._fitted()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        config = {k: getattr(self, k) for k in ARCHITECTURE}
        config.update(vocab_size=self.vocab_size_, seq_len=self.seq_len_)
        (path / "config.json").write_text(json.dumps(config))
        torch.save(self.model_.state_dict(), path / "denoiser.pt")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: str = "cpu") -> PrimeMDM:
        config = json.loads((Path(path) / "config.json").read_text())
        model = cls(**config, device=device, progress=False)
        model.vocab_size_, model.seq_len_ = config["vocab_size"], config["seq_len"]
        model._build()
        state = torch.load(Path(path) / "denoiser.pt", map_location=device, weights_only=True)
        model.model_.load_state_dict(state)
        model.model_.eval()
        return model
