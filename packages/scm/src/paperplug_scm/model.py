"""The SCM model (paper §4.1): a causal backbone with a token head and a response head.

The token head (dropout 0.1, Linear(h, 2)) scores every token; the response ("holistic") head
(Linear(h, 2, bias=False)) reads the last non-pad token and is used in training only. Any
Hugging Face causal LM works as the backbone: its LM head is dropped, its decoder kept.

`frame` (ours): a reply is read in frames of `frame` tokens, each token reading the prompt and
the reply from the start of the previous frame on (at most 2·frame tokens), so a monitor never
reads a context longer than those it was trained on; None reads the whole reply (the paper).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

from paperplug import seeded_torch
from paperplug.checks import (
    check_choice,
    check_float_tensor,
    check_scalar,
    check_sequence,
    check_type,
)

HEADS_FILE = "scm_heads.pt"
CONFIG_FILE = "scm_config.json"
INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
HEADS = ("token", "response")  # the token head (SCM) or the response head (full detection)


def decoder_of(backbone: nn.Module) -> nn.Module:
    """The decoder of a causal LM (`Qwen2ForCausalLM.model`), or the module itself."""
    base = getattr(backbone, "base_model", None)
    return base if isinstance(base, nn.Module) and base is not backbone else backbone


def hidden_size_of(backbone: nn.Module) -> int:
    config = getattr(backbone, "config", None)
    for key in ("hidden_size", "n_embd", "d_model"):
        if config is not None and isinstance(getattr(config, key, None), int):
            return getattr(config, key)
    raise TypeError(
        f"cannot read the hidden size of {type(backbone).__name__}: it needs a config with "
        "hidden_size (a Hugging Face model)"
    )


class SCMModel(nn.Module):
    """Backbone + token head + response head; the monitor needs only `hidden` and `scores`.

    The heads are drawn from `seed` with a local generator (the backbone comes built)."""

    def __init__(
        self,
        backbone: nn.Module,
        *,
        dropout: float = 0.1,
        frame: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if not isinstance(backbone, nn.Module):
            raise TypeError(f"backbone must be a torch module, got {type(backbone).__name__}")
        self.backbone = decoder_of(backbone)
        h = hidden_size_of(self.backbone)
        self.dropout_p = check_scalar(dropout, "dropout", low=0.0, high=1.0, inclusive="left")
        check_scalar(seed, "seed", "int", low=0)
        self.frame = check_scalar(frame, "frame", "int", low=1, allow_none=True)
        self.dropout = nn.Dropout(dropout)
        with seeded_torch(seed):  # nn.Linear draws a default init: keep the caller's generator
            self.token_head = nn.Linear(h, 2)
            self.response_head = nn.Linear(h, 2, bias=False)
        gen = torch.Generator().manual_seed(seed)
        for head in (self.token_head, self.response_head):  # Xavier, as the released code
            bound = (6.0 / (h + 2)) ** 0.5
            with torch.no_grad():
                head.weight.copy_(torch.rand(head.weight.shape, generator=gen) * 2 * bound - bound)
        nn.init.zeros_(self.token_head.bias)

    def hidden(
        self,
        input_ids: torch.Tensor,  # (batch, seq)
        attention_mask: torch.Tensor | None = None,
        cache: Any = None,
        use_cache: bool = False,
        position_ids: torch.Tensor | None = None,  # (batch, seq); batched steps (batching.py)
    ) -> tuple[torch.Tensor, Any]:
        """Last hidden states (batch, seq, h) and, with `use_cache`, the extended KV cache
        (paperplug-llm's `forward_with_cache`: whatever the transformers release calls it)."""
        self._check_ids(input_ids, attention_mask, position_ids, cache)
        check_type(use_cache, "use_cache", bool)
        if cache is not None and not use_cache:
            raise ValueError("cache is only read with use_cache=True")
        if use_cache:
            from paperplug_llm import forward_with_cache

            extra = {} if position_ids is None else {"position_ids": position_ids}
            out, cache = forward_with_cache(
                self.backbone, input_ids, cache, attention_mask=attention_mask, **extra
            )
        else:
            out, cache = self.backbone(input_ids=input_ids, attention_mask=attention_mask), None
        hidden = getattr(out, "last_hidden_state", None)
        return (out[0] if hidden is None else hidden), cache

    def _check_ids(
        self,
        input_ids: Any,
        attention_mask: Any = None,
        position_ids: Any = None,
        cache: Any = None,
    ) -> None:
        """Token ids (batch, seq) the backbone has, and a mask/positions of their shape."""
        check_type(input_ids, "input_ids", torch.Tensor)
        vocab = self.backbone.get_input_embeddings().num_embeddings
        if input_ids.dtype not in INT_DTYPES or input_ids.ndim != 2 or not input_ids.numel():
            raise TypeError(
                f"input_ids must be a non-empty (batch, seq) tensor of ints, got "
                f"{input_ids.dtype} of shape {tuple(input_ids.shape)}"
            )
        if int(input_ids.min()) < 0 or int(input_ids.max()) >= vocab:
            raise ValueError(
                f"input_ids must be token ids in [0, {vocab}), got "
                f"{int(input_ids.min())}..{int(input_ids.max())}"
            )
        for name, value in (("attention_mask", attention_mask), ("position_ids", position_ids)):
            if value is None:
                continue
            check_type(value, name, torch.Tensor)
            if value.is_floating_point() or value.is_complex():
                raise TypeError(f"{name} must hold ints or bools, got {value.dtype}")
            n, seq = input_ids.shape  # a mask covers the cached tokens too
            if name == "attention_mask" and (
                value.ndim != 2
                or value.shape[0] != n
                or value.shape[1] < seq
                or (cache is None and value.shape[1] != seq)
            ):
                raise ValueError(
                    f"attention_mask must have input_ids' {n} rows and {seq} columns (more with "
                    f"a cache), got shape {tuple(value.shape)}"
                )
            if name == "position_ids" and value.shape != input_ids.shape:
                raise ValueError(
                    f"position_ids must have input_ids' shape "
                    f"{tuple(input_ids.shape)}, got {tuple(value.shape)}"
                )

    @property
    def device(self) -> torch.device:
        return self.token_head.weight.device

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Token logits (batch, seq, 2) and response logits (batch, 2) at the last real token."""
        hidden, _ = self.hidden(input_ids, attention_mask)
        if attention_mask is None:
            last = torch.full((input_ids.shape[0],), input_ids.shape[1] - 1, device=hidden.device)
        else:
            positions = torch.arange(input_ids.shape[1], device=input_ids.device)
            last = (positions * attention_mask.to(torch.long)).argmax(-1)
        pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
        return self.token_head(self.dropout(hidden)), self.response_head(pooled)

    def scores(self, hidden: torch.Tensor, head: str = "token") -> torch.Tensor:
        """P(harmful) per position from the token head, or from the response head applied to
        every prefix (the full-detection baseline on partial output)."""
        check_float_tensor(hidden, "hidden")
        if hidden.ndim < 1 or hidden.shape[-1] != self.token_head.in_features:
            raise ValueError(
                f"hidden must end in the model's width {self.token_head.in_features}"
                f", got shape {tuple(hidden.shape)}"
            )
        if head == "token":
            logits = self.token_head(hidden)
        elif head == "response":
            logits = self.response_head(hidden)
        else:
            check_choice(head, "head", HEADS)
        return logits.softmax(-1)[..., 1]

    def save_pretrained(self, path: str | os.PathLike[str]) -> None:
        """Backbone (Hugging Face format), heads and config under `path`."""
        path = Path(check_type(path, "path", (str, os.PathLike)))
        path.mkdir(parents=True, exist_ok=True)
        if not hasattr(self.backbone, "save_pretrained"):
            raise TypeError("saving needs a Hugging Face backbone (save_pretrained)")
        self.backbone.save_pretrained(path / "backbone")
        heads = {"token_head": self.token_head.state_dict()}
        heads["response_head"] = self.response_head.state_dict()
        torch.save(heads, path / HEADS_FILE)
        config = {"dropout": self.dropout_p, "frame": self.frame}
        (path / CONFIG_FILE).write_text(json.dumps(config))

    @classmethod
    def from_pretrained(
        cls,
        path_or_name: str | os.PathLike[str],
        *,
        device: str | torch.device | None = None,
        **kw: Any,
    ) -> SCMModel:
        """An SCM checkpoint saved by `save_pretrained`, or fresh heads (drawn from `seed=`)
        on a Hugging Face backbone given by hub name or local path."""
        from transformers import AutoModel

        path = Path(path_or_name)
        saved = (path / HEADS_FILE).is_file()
        with seeded_torch(int(kw.get("seed", 0))):  # a part missing from the weights is drawn
            backbone = AutoModel.from_pretrained(path / "backbone" if saved else str(path))
        if not saved:
            return cls(backbone, **kw).to(device or "cpu").eval()
        model = cls(backbone, **json.loads((path / CONFIG_FILE).read_text()))
        heads = torch.load(path / HEADS_FILE, weights_only=True, map_location="cpu")
        model.token_head.load_state_dict(heads["token_head"])
        model.response_head.load_state_dict(heads["response_head"])
        return model.to(device or "cpu").eval()


def pad_batch(
    encoded: list[Any], pad_id: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded input ids, attention mask, token labels and response labels."""
    from paperplug_scm.fineharm import IGNORE_INDEX

    width = max(len(e.input_ids) for e in encoded)
    ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    labels = torch.full((len(encoded), width), IGNORE_INDEX, dtype=torch.long)
    for i, e in enumerate(encoded):
        n = len(e.input_ids)
        ids[i, :n] = torch.tensor(e.input_ids)
        mask[i, :n] = 1
        labels[i, :n] = torch.tensor(e.token_labels)
    return ids, mask, labels, torch.tensor([e.response_label for e in encoded])


def context_start(i: int, frame: int | None) -> int:
    """The first reply token that reply token `i` reads: the start of the previous frame."""
    return 0 if frame is None else max(0, (i // frame - 1) * frame)


def _segments(encoded: list[Any], frame: int | None) -> list[tuple[int, list[int], int]]:
    """(example index, ids to forward, first position scored): the whole example, or one
    segment per frame holding the prompt, the previous frame and the frame."""
    out = []
    for j, e in enumerate(encoded):
        p, n = e.response_start, len(e.input_ids) - e.response_start
        if frame is None or n <= 2 * frame:
            out.append((j, list(e.input_ids), p))
            continue
        for b in range(0, n, frame):
            s = context_start(b, frame)
            out.append(
                (j, list(e.input_ids[:p]) + list(e.input_ids[p + s : p + b + frame]), p + b - s)
            )
    return out


@torch.no_grad()
def score_responses(
    model: SCMModel, encoded: list[Any], *, head: str = "token", batch_size: int = 32
) -> list[list[float]]:
    """P(harmful) of every response token, one forward per batch of frames (causal, so equal
    to what the streaming monitor computes token by token, frame by frame)."""
    from paperplug_scm.fineharm import EncodedExample

    check_type(model, "model", SCMModel)
    check_sequence(encoded, "encoded", EncodedExample, min_len=0, what="EncodedExamples")
    check_choice(head, "head", HEADS)
    check_scalar(batch_size, "batch_size", "int", low=1)
    was_training = model.training
    model.eval()
    out: list[list[float]] = [[] for _ in encoded]
    segments = _segments(encoded, model.frame)
    for start in range(0, len(segments), batch_size):
        chunk = segments[start : start + batch_size]
        width = max(len(ids) for _, ids, _ in chunk)
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for i, (_, seg, _) in enumerate(chunk):
            ids[i, : len(seg)], mask[i, : len(seg)] = torch.tensor(seg), 1
        hidden, _ = model.hidden(ids.to(model.device), mask.to(model.device))
        probs = model.scores(hidden, head)  # (batch, seq)
        for i, (j, seg, first) in enumerate(chunk):
            out[j] += probs[i, first : len(seg)].tolist()
    model.train(was_training)
    return out
