"""Batched monitor steps (ours, for a server watching many streams at once): the KV-cache
steps that open streams ask for while one forward pass runs are queued and run together as
the next one, as inference servers batch requests.

Each stream's cache is left-padded to the longest, its new tokens right-padded; the attention
mask hides the padding and the position ids keep each stream's own positions, so a stream's
hidden states are those of its own step up to float rounding (about 1e-7 on the tiny
backbone) and its decisions are the same. Needs a decoder whose KV cache is transformers'
`DynamicCache` (one key and value tensor per layer, `(batch, heads, positions, dim)`).
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Any

import torch
from torch.nn import functional as F

from paperplug.checks import check_scalar


def _layers(cache: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    layers = getattr(cache, "layers", None)
    if layers is None:
        raise TypeError(
            f"batched steps need a DynamicCache with .layers, got {type(cache).__name__}"
        )
    return [(layer.keys, layer.values) for layer in layers]


def _cache(layers: list[tuple[torch.Tensor, torch.Tensor]]) -> Any:
    from transformers import DynamicCache

    return DynamicCache(ddp_cache_data=layers)


class StepBatcher:
    """Runs `step(cache, ids)` calls from many threads as batched forward passes of
    `model.hidden`, at most `max_batch` streams a pass, in one worker thread. `largest` is the
    largest batch run so far."""

    def __init__(self, model: Any, *, max_batch: int = 64) -> None:
        self.model = model
        self.max_batch = check_scalar(max_batch, "max_batch", "int", low=1)
        self.largest = 0
        self._queue: queue.Queue[tuple[Any, list[int], Future]] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._lock = threading.Lock()

    def step(self, cache: Any, ids: list[int]) -> tuple[torch.Tensor, Any]:
        """The hidden states of `ids` read after `cache` (ids, h) and the extended cache; the
        caller waits for the batch its step joins."""
        if not ids:
            raise ValueError("ids must hold at least one token")
        with self._lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, daemon=True, name="scm-batch")
                self._worker.start()
        done: Future = Future()
        self._queue.put((cache, list(ids), done))
        return done.result()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                results = self._forward([(c, ids) for c, ids, _ in batch])
            except Exception as exc:  # every waiting stream gets the error (fails closed)
                for _, _, done in batch:
                    done.set_exception(exc)
                continue
            self.largest = max(self.largest, len(batch))
            for (_, _, done), result in zip(batch, results, strict=True):
                done.set_result(result)

    @torch.no_grad()
    def _forward(self, steps: list[tuple[Any, list[int]]]) -> list[tuple[torch.Tensor, Any]]:
        device = self.model.device
        lengths = [0 if c is None else c.get_seq_length() for c, _ in steps]
        width, longest = max(len(ids) for _, ids in steps), max(lengths)
        ids = torch.zeros((len(steps), width), dtype=torch.long, device=device)
        mask = torch.zeros((len(steps), longest + width), dtype=torch.long, device=device)
        positions = torch.zeros((len(steps), width), dtype=torch.long, device=device)
        for i, ((_, new), n) in enumerate(zip(steps, lengths, strict=True)):
            ids[i, : len(new)] = torch.tensor(new, device=device)
            mask[i, longest - n : longest + len(new)] = 1
            positions[i] = n + torch.arange(width, device=device)
        cache = None
        if longest:
            shapes = next(_layers(c) for c, _ in steps if c is not None)
            padded = []
            for layer, (k0, v0) in enumerate(shapes):
                keys, values = [], []
                for (c, _), n in zip(steps, lengths, strict=True):
                    k, v = _layers(c)[layer] if c is not None else (k0[:, :, :0], v0[:, :, :0])
                    keys.append(F.pad(k, (0, 0, longest - n, 0)))  # (1, heads, longest, dim)
                    values.append(F.pad(v, (0, 0, longest - n, 0)))
                padded.append((torch.cat(keys), torch.cat(values)))
            cache = _cache(padded)
        hidden, cache = self.model.hidden(
            ids, attention_mask=mask, cache=cache, use_cache=True, position_ids=positions
        )
        out = []
        for i, ((_, new), n) in enumerate(zip(steps, lengths, strict=True)):
            own = slice(longest - n, longest + len(new))
            layers = [(k[i : i + 1, :, own].clone(), v[i : i + 1, :, own].clone())
                      for k, v in _layers(cache)]  # fmt: skip
            out.append((hidden[i, : len(new)], _cache(layers)))
        return out
