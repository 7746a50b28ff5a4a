"""Prime's subtokenizer (paper §3.1): an invertible map from a token x < C to ℓ base-b digits,
b = ⌈C^{1/ℓ}⌉, most significant first; ℓ = 1 is plain MDM. Optional code shuffling permutes
the tokens before encoding. The consistency mask says which tokens agree with the sub-tokens
observed so far (the carry-over of §3.2)."""

from __future__ import annotations

import numpy as np
import torch

from paperplug.checks import check_scalar, check_tensor, check_type


def smallest_base(vocab_size: int, ell: int) -> int:
    """The least b with b^ℓ ≥ C (integer arithmetic: no float root)."""
    check_scalar(vocab_size, "vocab_size", "int", low=2)
    check_scalar(ell, "ell", "int", low=1)
    b = 2
    while b**ell < vocab_size:
        b += 1
    return b


class Subtokenizer:
    """Tokens ↔ sub-tokens. `mask_id` (= b) marks a masked sub-token."""

    def __init__(self, vocab_size: int, ell: int, *, shuffle: bool = False, seed: int = 0) -> None:
        check_scalar(vocab_size, "vocab_size", "int", low=2)
        check_scalar(ell, "ell", "int", low=1)
        check_type(shuffle, "shuffle", bool)
        check_scalar(seed, "seed", "int", low=0)
        self.vocab_size, self.ell = vocab_size, ell
        self.base = smallest_base(vocab_size, ell) if ell > 1 else vocab_size
        self.mask_id = self.base
        codes = np.arange(vocab_size)
        if shuffle:  # a fixed random assignment of codes to tokens
            codes = np.random.default_rng(seed).permutation(self.base**ell)[:vocab_size]
        self.codes = torch.as_tensor(codes, dtype=torch.long)
        powers = self.base ** torch.arange(ell - 1, -1, -1)
        self.table = (self.codes[:, None] // powers) % self.base  # (C, ℓ) digits of each token
        self._token_of_code = {int(c): v for v, c in enumerate(codes)}

    def encode(self, tokens: torch.Tensor) -> torch.Tensor:
        """(...,) tokens → (..., ℓ) digits."""
        tokens = check_tensor(tokens, "tokens", dtype="int")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(f"tokens must lie in [0, {self.vocab_size}), got "
                             f"[{int(tokens.min())}, {int(tokens.max())}]")  # fmt: skip
        return self.table.to(tokens.device)[tokens]

    def decode(self, digits: torch.Tensor) -> torch.Tensor:
        """(..., ℓ) fully observed digits → (...,) tokens; a code that is no token raises."""
        digits = self._digits(digits)
        if (digits == self.mask_id).any():
            raise ValueError("cannot decode masked sub-tokens")
        powers = (self.base ** torch.arange(self.ell - 1, -1, -1)).to(digits.device)
        codes = (digits * powers).sum(-1)
        flat = [self._token_of_code.get(int(c), -1) for c in codes.reshape(-1).tolist()]
        if -1 in flat:
            raise ValueError(
                "a sub-token code maps to no token (the consistency mask prevents this)"
            )
        return torch.as_tensor(flat, dtype=torch.long, device=digits.device).reshape(codes.shape)

    def consistent(self, digits: torch.Tensor) -> torch.Tensor:
        """(..., ℓ) partly masked digits → (..., C) bool: token v agrees with every observed
        sub-token. A fully observed position allows exactly its own token."""
        digits = self._digits(digits)
        table = self.table.to(digits.device)  # (C, ℓ)
        observed = digits != self.mask_id  # (..., ℓ)
        agree = (table == digits.unsqueeze(-2)) | ~observed.unsqueeze(-2)  # (..., C, ℓ)
        return agree.all(-1)

    def _digits(self, digits: torch.Tensor, name: str = "digits") -> torch.Tensor:
        """(..., ℓ) int64 digits in [0, b] (b the mask), else a ValueError naming `name`."""
        digits = check_tensor(digits, name, dtype="int")
        if digits.ndim == 0 or digits.shape[-1] != self.ell:
            raise ValueError(f"{name} must have ℓ = {self.ell} sub-tokens in its last axis, got "
                             f"shape {tuple(digits.shape)}")  # fmt: skip
        if digits.min() < 0 or digits.max() > self.mask_id:
            raise ValueError(f"{name} must lie in [0, {self.mask_id}] ({self.mask_id}: masked), "
                             f"got [{int(digits.min())}, {int(digits.max())}]")  # fmt: skip
        return digits
