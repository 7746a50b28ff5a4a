"""One entry point from a short spec string to a ChatModel."""

from __future__ import annotations

from typing import Any


def get_chat_model(spec: str = "smollm2", **kw: Any) -> Any:
    """A ChatModel from `spec`:

    "smollm2" (the embedded SmolLM2-135M-Instruct), "hf:<name or path>" (a transformers causal
    LM), "openai:<model>" or "openai:<model>@<base_url>" (any OpenAI-compatible server; key and
    unset base URL from the environment). `kw` goes to the backend's constructor.
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a string, got {type(spec).__name__}")
    kind, _, rest = spec.partition(":")
    if spec == "smollm2":
        from paperplug_llm.smollm2 import load_smollm2

        return load_smollm2(**kw)
    if kind == "hf" and rest:
        from paperplug_llm.hf import HFChatModel

        return HFChatModel(rest, **kw)
    if kind == "openai" and rest:
        from paperplug_llm.openai_client import OpenAIChatModel

        model, _, base_url = rest.partition("@")
        return OpenAIChatModel(model, base_url or None, **kw)
    raise ValueError(
        f"unknown chat model spec {spec!r}: use 'smollm2', 'hf:<name or path>' or "
        "'openai:<model>[@<base_url>]'"
    )
