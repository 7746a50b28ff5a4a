"""The Trainer component: a masked diffusion model over token sequences with Prime's partial
masking (ℓ sub-tokens per token; ℓ = 1 is plain MDM): fit on the paper's objective (or on the
NELBO), the NELBO in bits per token, Euler sampling with idle-step counting, save and load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperplug import History, seeded_torch
from paperplug.checks import (
    check_array,
    check_choice,
    check_device,
    check_is_fitted,
    check_scalar,
    check_type,
)
from paperplug.harness import progress
from paperplug_prime.denoiser import BACKBONES, PrimeDenoiser
from paperplug_prime.nelbo import bits_per_token, nelbo_draw
from paperplug_prime.objective import prime_loss
from paperplug_prime.sampler import euler_sample
from paperplug_prime.schedule import SCHEDULES, T_MIN, Schedule
from paperplug_prime.subtokenizer import Subtokenizer

ARCHITECTURE = ("vocab_size", "seq_len", "ell", "shuffle", "schedule", "objective", "backbone",
                "d_embed", "hidden", "layers", "heads", "dropout", "seed")  # fmt: skip
OBJECTIVES = ("prime", "nelbo")


class PrimeMDM:
    """fit(tokens (N, L) ints in [0, vocab_size)) trains the denoiser on the paper's objective
    (`objective="prime"`) or on the NELBO (`"nelbo"`); `nelbo(tokens)` is the test bound in bits
    per token; `sample(n, nfe)` returns tokens and the idle-step fraction. `vocab_size`/`seq_len`
    default to the data's."""

    def __init__(self, vocab_size: int | None = None, seq_len: int | None = None, *, ell: int = 2,
                 shuffle: bool = False, schedule: str = "linear", objective: str = "prime",
                 backbone: str = "mlp", d_embed: int = 16, hidden: int = 256, layers: int = 2,
                 heads: int = 4, dropout: float = 0.1, steps: int = 2000, batch_size: int = 128,
                 lr: float = 1e-3, seed: int = 0, device: str = "cpu",
                 progress: bool = True) -> None:  # fmt: skip
        self.vocab_size, self.seq_len, self.ell, self.shuffle = vocab_size, seq_len, ell, shuffle
        self.schedule, self.objective, self.backbone = schedule, objective, backbone
        self.d_embed, self.hidden, self.layers, self.heads = d_embed, hidden, layers, heads
        self.dropout, self.steps, self.batch_size, self.lr = dropout, steps, batch_size, lr
        self.seed, self.device, self.progress = seed, device, progress

    def _reject_bad_params(self) -> None:
        check_scalar(self.vocab_size, "vocab_size", "int", low=2, allow_none=True)
        check_scalar(self.seq_len, "seq_len", "int", low=1, allow_none=True)
        check_scalar(self.ell, "ell", "int", low=1)
        check_type(self.shuffle, "shuffle", bool)
        check_choice(self.schedule, "schedule", SCHEDULES)
        check_choice(self.objective, "objective", OBJECTIVES)
        check_choice(self.backbone, "backbone", BACKBONES)
        for name in ("d_embed", "hidden", "layers", "heads", "steps", "batch_size"):
            check_scalar(getattr(self, name), name, "int", low=1)
        if self.backbone == "transformer" and self.hidden % self.heads:
            raise ValueError(
                f"hidden must be a multiple of heads for the transformer backbone, got "
                f"hidden={self.hidden}, heads={self.heads}"
            )
        check_scalar(self.dropout, "dropout", "real", low=0, high=1, inclusive="left")
        check_scalar(self.lr, "lr", "real", low=0, inclusive="neither")
        check_scalar(self.seed, "seed", "int", low=0)
        check_type(self.progress, "progress", bool)
        check_device(self.device)

    def _as_tokens(self, tokens: Any) -> torch.Tensor:
        """(N, L) int64 tokens on the model's device; after fit, of its length and vocabulary."""
        x = torch.as_tensor(check_array(tokens, "tokens", dtype="int", ndim=2))
        low, high = int(x.min()), int(x.max())
        if low < 0:
            raise ValueError(f"tokens must be >= 0, got {low}")
        if hasattr(self, "model_"):
            if x.shape[1] != self.seq_len_:
                raise ValueError(
                    f"tokens must have sequences of length {self.seq_len_} (the fitted "
                    f"seq_len), got {x.shape[1]}"
                )
            if high >= self.vocab_size_:
                raise ValueError(f"tokens must lie in [0, {self.vocab_size_}), got {high}")
        return x.to(self.device)

    def _build(self) -> None:
        self.sub_ = Subtokenizer(self.vocab_size_, self.ell, shuffle=self.shuffle, seed=self.seed)
        self.schedule_ = Schedule(self.schedule)
        with seeded_torch(self.seed):
            self.model_ = PrimeDenoiser(self.vocab_size_, self.seq_len_, self.ell, self.sub_.base,
                                        backbone=self.backbone, d_embed=self.d_embed,
                                        hidden=self.hidden, layers=self.layers, heads=self.heads,
                                        dropout=self.dropout).to(self.device)  # fmt: skip

    def fit(self, tokens: Any) -> PrimeMDM:
        self._reject_bad_params()
        for attr in ("model_", "sub_", "schedule_", "history_"):  # a refit starts afresh
            self.__dict__.pop(attr, None)
        x = self._as_tokens(tokens)
        high = int(x.max())
        self.vocab_size_ = self.vocab_size or max(high + 1, 2)
        if high >= self.vocab_size_:
            raise ValueError(f"tokens must lie in [0, vocab_size={self.vocab_size_}), got {high}")
        self.seq_len_ = self.seq_len or x.shape[1]
        if x.shape[1] != self.seq_len_:
            raise ValueError(
                f"tokens must have sequences of length seq_len={self.seq_len_}, got {x.shape[1]}"
            )
        self._build()
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
            u = torch.rand(self.batch_size, generator=gen, device=self.device)
            if self.objective == "prime":  # t ~ U(10⁻³, 1), the official clamp
                t = u.clamp_min(T_MIN)
                loss = prime_loss(self.model_, self.sub_, self.schedule_, x[idx], t, gen)
            else:
                loss = nelbo_draw(self.model_, self.sub_, self.schedule_, x[idx], 1 - u, gen)
            loss = loss.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 50 == 0 or step == self.steps:
                self.history_.log(step=step, loss_bits=loss.item() / (self.seq_len_ * np.log(2)))
        self.model_.eval()

    @torch.no_grad()
    def nelbo(self, tokens: Any, n_t: int = 128, seed: int = 0, batch_size: int = 256) -> float:
        """The NELBO in bits per token, an upper bound on −log₂ p(x) per token of the model's
        continuous-time reverse process (README, "The bound"): `n_t` stratified Monte-Carlo
        draws per sequence (each a masking level, its time and a mask)."""
        check_is_fitted(self, "model_")
        check_scalar(n_t, "n_t", "int", low=1)
        check_scalar(seed, "seed", "int", low=0)
        check_scalar(batch_size, "batch_size", "int", low=1)
        x = self._as_tokens(tokens)
        gen = torch.Generator(device=self.device).manual_seed(seed)
        offset = torch.rand((), generator=gen, device=self.device)
        total = torch.zeros(len(x), device=self.device)
        for i in range(n_t):
            u = (i + 1 - offset) / n_t  # stratified over (0, 1]: one masking level per stratum
            for chunk in torch.split(torch.arange(len(x), device=self.device), batch_size):
                draw = nelbo_draw(self.model_, self.sub_, self.schedule_, x[chunk],
                                  u.expand(len(chunk)), gen)  # fmt: skip
                total[chunk] += draw
        return bits_per_token(total / n_t, self.seq_len_)

    def sample(self, n: int, nfe: int = 64, seed: int = 0) -> tuple[np.ndarray, float]:
        """(n, L) sampled tokens and the idle-step fraction of the Euler sampler."""
        check_is_fitted(self, "model_")
        check_scalar(n, "n", "int", low=1)
        check_scalar(nfe, "nfe", "int", low=1)
        check_scalar(seed, "seed", "int", low=0)
        gen = torch.Generator(device=self.device).manual_seed(seed)
        tokens, idle = euler_sample(self.model_, self.sub_, self.schedule_, n, self.seq_len_, nfe,
                                    gen, self.device)  # fmt: skip
        return tokens.cpu().numpy(), idle

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the config and weights into the folder `path` (made if missing); `load` reads it."""
        check_is_fitted(self, "model_")
        path = Path(check_type(path, "path", (str, os.PathLike), what="a folder path"))
        if path.exists() and not path.is_dir():
            raise ValueError(f"path must be a folder, got the file {str(path)!r}")
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
