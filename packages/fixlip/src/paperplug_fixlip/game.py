"""The game (§3): players are the two inputs' parts (image patches ∪ text tokens); a
coalition's value is the similarity of the masked inputs' embeddings. A dual encoder embeds
each modality alone, so one pass per single-modality coalition serves every pairing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from paperplug.checks import check_array, check_scalar, check_sequence, check_type

Encoder = Callable[[np.ndarray], Any]  # bool (B, n_players of the modality) -> (B, d)


def _as_matrix(out: Any, rows: int, what: str) -> np.ndarray:
    if hasattr(out, "detach"):
        out = out.detach().cpu().double().numpy()
    out = np.asarray(out, dtype=float)
    if out.ndim != 2 or out.shape[0] != rows:
        raise ValueError(f"{what} must return an array of shape ({rows}, d), got {out.shape}")
    if not np.isfinite(out).all():
        raise ValueError(f"{what} returned non-finite embeddings")
    return out


class DualEncoderGame:
    """ν(T) = scale · cos(f_a(x_a ⊙ T_a), f_b(x_b ⊙ T_b)) for any two masked encoders.

    `encode_a(mask)` gets a bool (B, n_a) mask (True = player kept) and returns (B, d)
    embeddings (tensor or array); likewise `encode_b`. `scale` is e.g. CLIP's logit scale,
    so values are `logits_per_image`. `encoder_calls` counts single-input passes."""

    def __init__(
        self,
        encode_a: Encoder,
        encode_b: Encoder,
        n_a: int,
        n_b: int,
        *,
        scale: float = 1.0,
        normalize: bool = True,
        batch_size: int = 256,
        names_a: list[str] | None = None,
        names_b: list[str] | None = None,
    ) -> None:
        if not callable(encode_a) or not callable(encode_b):
            raise TypeError("encode_a and encode_b must be callables mask -> embeddings")
        for name, v in (("n_a", n_a), ("n_b", n_b), ("batch_size", batch_size)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        check_scalar(scale, "scale", low=0.0, inclusive="neither")
        check_type(normalize, "normalize", bool)
        for name, names, n in (("names_a", names_a, n_a), ("names_b", names_b, n_b)):
            if names is not None and len(check_sequence(names, name, str, what="names")) != n:
                raise ValueError(f"{name} must hold {n} names, got {len(names)}")
        self.encode_a, self.encode_b = encode_a, encode_b
        self.n_a, self.n_b = int(n_a), int(n_b)
        self.scale, self.normalize, self.batch_size = float(scale), normalize, int(batch_size)
        self.names_a = names_a or [f"a{i}" for i in range(self.n_a)]
        self.names_b = names_b or [f"b{j}" for j in range(self.n_b)]
        self.encoder_calls = 0
        self._empty: float | None = None

    @property
    def n_players(self) -> int:
        return self.n_a + self.n_b

    @property
    def names(self) -> list[str]:
        return list(self.names_a) + list(self.names_b)

    def _embed(self, encode: Encoder, masks: np.ndarray, what: str) -> np.ndarray:
        chunks = []
        for start in range(0, len(masks), self.batch_size):
            batch = np.ascontiguousarray(masks[start : start + self.batch_size])
            chunks.append(_as_matrix(encode(batch), len(batch), what))
        self.encoder_calls += len(masks)
        emb = np.concatenate(chunks)
        if self.normalize:
            emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        return emb

    def embed_a(self, masks: np.ndarray) -> np.ndarray:
        """Normalised embeddings of the first input under each mask (one pass per row)."""
        return self._embed(self.encode_a, _masks(masks, "masks", self.n_a), "encode_a")

    def embed_b(self, masks: np.ndarray) -> np.ndarray:
        """Normalised embeddings of the second input under each mask (one pass per row)."""
        return self._embed(self.encode_b, _masks(masks, "masks", self.n_b), "encode_b")

    def cross_values(self, masks_a: np.ndarray, masks_b: np.ndarray) -> np.ndarray:
        """Raw similarity of every (a, b) pairing, (B_a, B_b), from B_a + B_b passes and one
        matmul (§3, the cross-modal trick)."""
        ea = self._embed(self.encode_a, _masks(masks_a, "masks_a", self.n_a), "encode_a")
        eb = self._embed(self.encode_b, _masks(masks_b, "masks_b", self.n_b), "encode_b")
        return self.scale * ea @ eb.T

    def __call__(self, coalitions: np.ndarray) -> np.ndarray:
        """Raw similarity of each joint coalition (bool (m, n)): two passes per row."""
        coalitions = np.asarray(coalitions, dtype=bool)
        ea = self._embed(self.encode_a, coalitions[:, : self.n_a], "encode_a")
        eb = self._embed(self.encode_b, coalitions[:, self.n_a :], "encode_b")
        return self.scale * np.einsum("md,md->m", ea, eb)

    @property
    def empty_value(self) -> float:
        """ν(∅) before normalisation: the value every coalition's value is taken relative to."""
        if self._empty is None:
            self._empty = float(
                self.cross_values(np.zeros((1, self.n_a), bool), np.zeros((1, self.n_b), bool))[
                    0, 0
                ]
            )
        return self._empty


class FunctionGame:
    """Any cooperative game: `value_fn(bool (m, n)) -> (m,)` values (one call per row)."""

    def __init__(self, value_fn: Callable[[np.ndarray], Any], n: int, *, batch_size: int = 4096):
        if not callable(value_fn):
            raise TypeError("value_fn must be a callable coalitions -> values")
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        check_scalar(batch_size, "batch_size", "int", low=1)
        self.value_fn, self.n_players, self.batch_size = value_fn, int(n), int(batch_size)
        self.encoder_calls = 0
        self._empty: float | None = None

    def __call__(self, coalitions: np.ndarray) -> np.ndarray:
        coalitions = np.asarray(coalitions, dtype=bool)
        out = []
        for start in range(0, len(coalitions), self.batch_size):
            batch = coalitions[start : start + self.batch_size]
            v = self.value_fn(batch.copy())
            if hasattr(v, "detach"):
                v = v.detach().cpu().double().numpy()
            v = np.asarray(v, dtype=float).reshape(-1)
            if v.shape != (len(batch),):
                raise ValueError(f"value_fn must return {len(batch)} values, got shape {v.shape}")
            if not np.isfinite(v).all():
                raise ValueError("value_fn returned non-finite values")
            out.append(v)
        self.encoder_calls += len(coalitions)
        return np.concatenate(out) if out else np.zeros(0)

    @property
    def empty_value(self) -> float:
        if self._empty is None:
            self._empty = float(self(np.zeros((1, self.n_players), dtype=bool))[0])
        return self._empty


def _masks(value: Any, name: str, width: int) -> np.ndarray:
    """`value` as boolean masks (rows, `width`), from bools or 0/1; errors name `name`."""
    masks = check_array(value, name, ndim=2, shape=(None, width))
    if not np.isin(masks, (0, 1)).all():
        raise ValueError(f"{name} must hold masks of 0/1 (or booleans)")
    return masks.astype(bool)
