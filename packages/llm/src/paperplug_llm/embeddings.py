"""Sentence embeddings from a Hugging Face encoder, as sentence-transformers computes them for
all-MiniLM-L6-v2: mean pooling over the attention mask, then L2 normalisation. Shared by the
packages that embed text with a local encoder (AMA's tool retriever, DRIFT's learned detector)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paperplug.checks import check_scalar, check_sequence
from paperplug.extras import requires_extra


class MeanPoolEncoder:
    """`encode(texts)` → unit-norm (n, hidden) float32 numpy embeddings of the BERT-like model
    at `path` (`from_pretrained`), texts cut at `max_length` tokens, `batch_size` at a time.
    torch and transformers are imported on construction, so importing this module is cheap."""

    def __init__(self, path: str | Path, *, max_length: int = 256, batch_size: int = 32) -> None:
        with requires_extra("paperplug-llm", "hf", "local sentence embeddings"):
            import torch
            from transformers import AutoModel, AutoTokenizer
        self.path = Path(path)
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path))
        self.model = AutoModel.from_pretrained(str(self.path), dtype=torch.float32).eval()
        self.max_length = check_scalar(max_length, "max_length", "int", low=1)
        self.batch_size = check_scalar(batch_size, "batch_size", "int", low=1)

    def encode(self, texts: Sequence[str]) -> Any:
        """Unit-norm embeddings, one row per text in the order given (a numpy array)."""
        import torch

        texts = check_sequence(texts, "texts", str, min_len=0, what="texts")
        out = [torch.zeros(0, self.model.config.hidden_size)]
        with torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    list(texts[i : i + self.batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                hidden = self.model(**batch).last_hidden_state  # (batch, tokens, hidden)
                mask = batch["attention_mask"].unsqueeze(-1).float()
                mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(mean, dim=-1))
        return torch.cat(out).numpy()
