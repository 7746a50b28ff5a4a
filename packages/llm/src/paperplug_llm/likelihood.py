"""Scoring continuations under a transformers causal LM, and the KV-cache plumbing it needs.

Methods that rank candidate texts by likelihood (AMA's LLM tool selector), monitors that run
a model incrementally (SCM) and decoders that roll back to a claim's start (CSD) use these
instead of reaching into a backend or copying the cache shim.
"""

from __future__ import annotations

import copy
import inspect
import operator
from collections.abc import Sequence
from typing import Any

from paperplug.checks import check_scalar, check_tensor
from paperplug.extras import requires_extra

with requires_extra("paperplug-llm", "hf", "scoring with a local transformers model"):
    import torch


def cache_keyword(model: Any) -> str:
    """The name `model.forward` gives its KV cache: `cache` in transformers >= 5.24,
    `past_key_values` before."""
    forward = getattr(model, "forward", model)
    try:
        params = inspect.signature(forward).parameters
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"model must be a transformers model (a forward method), got {type(model).__name__}"
        ) from exc
    return "cache" if "cache" in params else "past_key_values"


def _check_model(model: Any) -> int | None:
    """The vocabulary size of a torch `model` (its input embedding's rows; None without one)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(
            f"model must be a transformers model (a torch module), got {type(model).__name__}"
        )
    embedding = getattr(model, "get_input_embeddings", lambda: None)()
    return getattr(embedding, "num_embeddings", None)


def _check_token_ids(ids: Any, name: str, vocab: int | None) -> list[int]:
    """`ids` as a list of ints, each a token of the vocabulary [0, vocab)."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence | torch.Tensor):
        raise TypeError(f"{name} must be a list of token ids, got {type(ids).__name__}")
    out = []
    for t in ids:
        try:
            out.append(operator.index(t))
        except TypeError:
            raise TypeError(f"{name} must hold int token ids, got {t!r}") from None
    bad = [t for t in out if t < 0 or (vocab is not None and t >= vocab)]
    if bad:
        raise ValueError(f"{name} holds {bad[0]}, not a token id of the vocabulary [0, {vocab})")
    return out


def _check_cache(cache: Any, name: str = "cache") -> None:
    if cache is not None and not hasattr(cache, "get_seq_length"):
        raise TypeError(
            f"{name} must be a transformers KV cache or None, got {type(cache).__name__}"
        )


def forward_with_cache(
    model: Any, input_ids: torch.Tensor, cache: Any = None, **kw: Any
) -> tuple[Any, Any]:
    """One forward pass that reads and extends `cache`: (model output, the updated cache),
    whatever the transformers release calls the cache. `input_ids`: (batch, tokens) ids."""
    vocab = _check_model(model)
    key = cache_keyword(model)
    ids = check_tensor(input_ids, "input_ids", dtype="int", ndim=2)
    if ids.shape[1] == 0:
        raise ValueError("input_ids has no token: give (batch, tokens) with tokens >= 1")
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or (vocab is not None and high >= vocab):
        bad = low if low < 0 else high
        raise ValueError(f"input_ids holds {bad}, not a token id of the vocabulary [0, {vocab})")
    _check_cache(cache)
    input_ids = ids.to(next(model.parameters()).device)
    extra = {key: cache} if cache is not None else {}
    out = model(input_ids=input_ids, use_cache=True, **extra, **kw)
    new = getattr(out, key, None)
    if new is None:
        new = getattr(out, "past_key_values", None)
    return out, new


def crop_cache(cache: Any, length: int) -> Any:
    """Keep the first `length` positions of a KV cache (rolling a stream back); `None` for 0.

    Crops by a negative count, the form every transformers release accepts (5.24's
    `DynamicCache.crop` refuses some positive lengths)."""
    length = check_scalar(length, "length", "int", low=0)
    _check_cache(cache)
    if cache is None or length == 0:
        return None
    total = cache.get_seq_length()
    if length > total:
        raise ValueError(f"length={length}: cannot crop a cache of {total} positions to {length}")
    if length < total:
        cache.crop(length - total)
    return cache


def _check_candidates(candidates: Sequence[Sequence[int]], vocab: int | None) -> list[list[int]]:
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
        raise TypeError("candidates must be a list of token-id lists")
    out = []
    for i, ids in enumerate(candidates):
        ids = _check_token_ids(ids, f"candidates[{i}]", vocab)
        if not ids:
            raise ValueError(f"candidates[{i}] is empty: every continuation needs a token")
        out.append(ids)
    return out


def continuation_logprobs(
    model: Any,
    prompt_ids: Sequence[int],
    candidates: Sequence[Sequence[int]],
    *,
    batch_size: int = 16,
) -> list[list[float]]:
    """log p(c_j | prompt, c_<j) for every token of every candidate continuation.

    The prompt is encoded once; the candidates are scored in right-padded batches over
    copies of its KV cache (a causal model never attends to the padding after a real token,
    so no mask is needed and each score equals a separate teacher-forced pass)."""
    vocab = _check_model(model)
    prompt = _check_token_ids(prompt_ids, "prompt_ids", vocab)
    if not prompt:
        raise ValueError("prompt_ids is empty: the first token needs a context to be scored")
    conts = _check_candidates(candidates, vocab)
    check_scalar(batch_size, "batch_size", "int", low=1)
    device = next(model.parameters()).device
    scores: list[list[float]] = []
    with torch.inference_mode():
        out, cache = forward_with_cache(model, torch.tensor([prompt], device=device))
        head = torch.log_softmax(out.logits[0, -1].float(), -1)  # (vocab,): the first token
        for start in range(0, len(conts), batch_size):
            chunk = conts[start : start + batch_size]
            width = max(len(c) for c in chunk) - 1
            rows = [[float(head[c[0]])] for c in chunk]
            if width > 0:
                ids = torch.zeros((len(chunk), width), dtype=torch.long, device=device)
                for r, c in enumerate(chunk):
                    ids[r, : len(c) - 1] = torch.tensor(c[:-1])
                batch_cache = copy.deepcopy(cache)
                batch_cache.batch_repeat_interleave(len(chunk))
                step, _ = forward_with_cache(model, ids, batch_cache)
                logp = torch.log_softmax(step.logits.float(), -1)  # (batch, width, vocab)
                for r, c in enumerate(chunk):
                    if len(c) == 1:
                        continue
                    nxt = torch.tensor(c[1:], dtype=torch.long, device=device)
                    rows[r] += logp[r, torch.arange(len(c) - 1), nxt].tolist()
            scores += rows
    return scores
