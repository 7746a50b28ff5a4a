"""Claim generators: what CSD samples claims from, one claim at a time, with rollback.

A generator's `start(messages, seed, **options)` opens a session over one reply; the session
draws the next claim after the accepted prefix (`draw`), commits it (`accept`) or, when the
guard rejects it, simply draws again: the next `draw` starts from the claim's start. `pop`
backtracks over the last accepted claim. Two real generators:

- `HFClaimGenerator`: any Hugging Face causal LM; a rejected claim is undone by cropping the
  KV cache back to the claim start (paperplug-llm's `crop_cache`), so a resample costs only the
  claim's own tokens.
- `ChatClaimGenerator`: any ChatModel (an OpenAI-compatible endpoint): each claim is a request
  with the accepted prefix sent back as an assistant prefill, cut at the first claim boundary.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from paperplug.checks import check_scalar, check_type
from paperplug_csd.claims import Claim, ClaimSegmenter


@runtime_checkable
class ClaimSession(Protocol):
    """One reply being decoded claim by claim."""

    tokens: int  # tokens generated so far, rejected claims included (the decoding cost)

    def draw(self) -> Claim: ...

    def accept(self, claim: Claim) -> None: ...

    def pop(self) -> None: ...


@runtime_checkable
class ClaimGenerator(Protocol):
    """Opens a ClaimSession per reply; `seed` fixes every draw of the reply."""

    def start(
        self, messages: Sequence[Mapping[str, Any]], seed: int | None = None, **options: Any
    ) -> ClaimSession: ...


def _check_messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if not isinstance(messages, Sequence) or not messages:
        raise TypeError("messages must be a prompt string or a non-empty list of chat messages")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or "role" not in m:
            raise TypeError(f"messages[{i}] must be a mapping with a 'role'")
        out.append(dict(m))
    return out


class _HFSession:
    """KV-cached decoding of one reply; `starts` are the token positions where claims begin."""

    def __init__(self, gen: HFClaimGenerator, ids: list[int], seed: int | None, opts: dict):
        import torch
        from paperplug_llm import forward_with_cache

        self.gen, self.opts, self.torch = gen, opts, torch
        self.prompt_len = len(ids)
        self.device = gen.chat_model.device
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))
        with torch.inference_mode():
            out, self.cache = forward_with_cache(gen.model, torch.tensor([ids], device=self.device))
        self.starts = [len(ids)]  # claim j starts at token position starts[j]
        self.start_logits = [out.logits[0, -1].float()]  # next-token logits at each start
        self.pending: Any = None
        self.tokens = 0

    def draw(self) -> Claim:
        from paperplug_llm import crop_cache, forward_with_cache, sample_next

        torch = self.torch
        start = self.starts[-1]
        self.cache = crop_cache(self.cache, start)  # roll back to the claim start
        logits, ids, end = self.start_logits[-1], [], False
        segmenter, tok = self.gen.segmenter, self.gen.chat_model.tokenizer
        text = ""
        with torch.inference_mode():
            while True:
                if start - self.prompt_len + len(ids) >= self.opts["max_tokens"]:
                    end = True
                    break
                token = sample_next(
                    logits,
                    temperature=self.opts["temperature"],
                    top_p=self.opts["top_p"],
                    top_k=self.opts["top_k"],
                    generator=self.generator,
                )
                self.tokens += 1
                if token in self.gen.chat_model.eos_token_ids:
                    end = True
                    break
                ids.append(token)
                out, self.cache = forward_with_cache(
                    self.gen.model, torch.tensor([[token]], device=self.device), self.cache
                )
                logits = out.logits[0, -1].float()
                text = tok.decode(ids, skip_special_tokens=True)
                if not text.endswith("\ufffd") and segmenter.ends_claim(text, len(ids)):
                    break
        self.pending = (ids, logits)
        return Claim(text, ids, end)

    def accept(self, claim: Claim) -> None:
        ids, logits = self.pending
        if list(claim.token_ids) != ids:
            raise ValueError("accept() takes the claim the last draw() returned")
        self.starts.append(self.starts[-1] + len(ids))
        self.start_logits.append(logits)

    def pop(self) -> None:
        if len(self.starts) < 2:
            raise ValueError("no accepted claim to pop")
        self.starts.pop()
        self.start_logits.pop()


class HFClaimGenerator:
    """Claims from a Hugging Face causal LM, with KV-cache rollback to the claim start.

    `model`: paperplug-llm's `HFChatModel`, a model name or path, or a loaded transformers
    causal LM with `tokenizer`. Sampling defaults to temperature 1 (the model's own
    distribution, which CSD's theorem is about); options per reply: temperature, top_p, top_k,
    max_tokens."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        segmenter: ClaimSegmenter | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        max_tokens: int = 128,
    ) -> None:
        from paperplug_llm import HFChatModel

        if tokenizer is not None and isinstance(model, HFChatModel):
            raise TypeError("tokenizer: an HFChatModel brings its own; pass tokenizer=None")
        if isinstance(model, (str, os.PathLike)) or tokenizer is not None:
            model = HFChatModel(model, tokenizer)
        if not isinstance(model, HFChatModel):
            raise TypeError(
                "model must be an HFChatModel, a model name or path, or a causal LM with its "
                f"tokenizer; got {type(model).__name__}"
            )
        self.chat_model, self.model = model, model.model
        self.segmenter = _segmenter(segmenter)
        self.defaults = _check_options(
            {"temperature": temperature, "top_p": top_p, "top_k": top_k, "max_tokens": max_tokens}
        )

    def start(
        self, messages: Sequence[Mapping[str, Any]], seed: int | None = None, **options: Any
    ) -> _HFSession:
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        opts = _check_options({**self.defaults, **options})
        ids = self.chat_model.prompt_ids(_check_messages(messages))
        return _HFSession(self, ids, seed, opts)


def _check_options(opts: dict[str, Any]) -> dict[str, Any]:
    known = {"temperature", "top_p", "top_k", "max_tokens"}
    unknown = set(opts) - known
    if unknown:
        raise TypeError(f"unknown decoding options {sorted(unknown)}; known: {sorted(known)}")
    if isinstance(opts["temperature"], numbers.Real) and not opts["temperature"] > 0:
        raise ValueError(
            "need temperature > 0 (CSD resamples: greedy decoding would redraw the same "
            f"claim), got {opts['temperature']!r}"
        )
    return {
        "temperature": check_scalar(opts["temperature"], "temperature", low=0, inclusive="neither"),
        "top_p": check_scalar(opts["top_p"], "top_p", low=0, high=1, inclusive="right"),
        "top_k": check_scalar(opts["top_k"], "top_k", "int", low=0),
        "max_tokens": check_scalar(opts["max_tokens"], "max_tokens", "int", low=1),
    }


def _segmenter(segmenter: Any) -> ClaimSegmenter:
    """The given segmenter (checked), or the default one."""
    if segmenter is None:
        return ClaimSegmenter()
    return check_type(segmenter, "segmenter", ClaimSegmenter)


def _approx_tokens(text: str) -> int:
    """Tokens of a text we hold no tokenizer for: the larger of its words and characters / 4."""
    return max(len(text.split()), -(-len(text) // 4))


class _ChatSession:
    def __init__(self, gen: ChatClaimGenerator, messages: list, seed: int | None, opts: dict):
        self.gen, self.messages, self.opts = gen, messages, opts
        self.rng = np.random.default_rng(seed)
        self.accepted: list[str] = []
        self.tokens = 0

    def _request(self, prefix: str) -> tuple[str, bool]:
        """The model's continuation after `prefix` and whether it ended by itself."""
        messages = list(self.messages)
        if prefix:
            messages.append({"role": "assistant", "content": prefix})
        kw = {
            "temperature": self.opts["temperature"],
            "max_tokens": self.gen.segmenter.max_claim_tokens,
            "seed": int(self.rng.integers(2**31)),
            **self.gen.request_kw,
        }
        stream = getattr(self.gen.chat_model, "stream", None)
        if callable(stream):
            reply, text = stream(messages, **kw), ""
            for delta in reply:
                text += delta
                if len(self.gen.segmenter.split_claims(text)) > 1:
                    getattr(reply, "close", lambda: None)()
                    return text, False
            completion = getattr(reply, "completion", None)
            return text, getattr(completion, "finish_reason", "stop") != "length"
        complete = getattr(self.gen.chat_model, "complete", None)
        if callable(complete):
            result = complete(messages, **kw)
            return result.text, getattr(result, "finish_reason", "stop") != "length"
        return self.gen.chat_model.chat(messages, **kw), True

    def draw(self) -> Claim:
        prefix = "".join(self.accepted)
        used = _approx_tokens(prefix)
        if used >= self.opts["max_tokens"]:
            return Claim("", [], True)
        text, ended = self._request(prefix)
        pieces = self.gen.segmenter.split_claims(text)
        claim = pieces[0] if pieces else ""
        self.tokens += _approx_tokens(claim)
        end = (ended and len(pieces) <= 1) or used + _approx_tokens(claim) >= self.opts[
            "max_tokens"
        ]
        return Claim(claim, [], end or not claim)

    def accept(self, claim: Claim) -> None:
        self.accepted.append(claim.text)

    def pop(self) -> None:
        if not self.accepted:
            raise ValueError("no accepted claim to pop")
        self.accepted.pop()


class ChatClaimGenerator:
    """Claims from any ChatModel (an OpenAI-compatible endpoint, a local backend).

    Each draw is one request: the conversation plus the accepted prefix as a final assistant
    message (a prefill; vLLM continues it with `continue_final_message=True,
    add_generation_prompt=False`, which `request_kw` passes through), `max_tokens` set to the
    claim limit and a per-draw seed; a streamed reply is closed at the first claim boundary.
    Claims are segmented on whitespace words; the reply's `max_tokens` and the reported cost
    count max(words, characters / 4), since no tokenizer is at hand."""

    def __init__(
        self,
        chat_model: Any,
        *,
        segmenter: ClaimSegmenter | None = None,
        temperature: float = 1.0,
        max_tokens: int = 128,
        request_kw: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(getattr(chat_model, "chat", None)):
            raise TypeError(f"chat_model must have chat(messages), got {type(chat_model).__name__}")
        self.chat_model = chat_model
        self.segmenter = _segmenter(segmenter)
        self.defaults = _check_options(
            {"temperature": temperature, "top_p": 1.0, "top_k": 0, "max_tokens": max_tokens}
        )
        self.request_kw = dict(check_type(request_kw or {}, "request_kw", Mapping))

    def start(
        self, messages: Sequence[Mapping[str, Any]], seed: int | None = None, **options: Any
    ) -> _ChatSession:
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        opts = _check_options({**self.defaults, **options})
        return _ChatSession(self, _check_messages(messages), seed, opts)


def decodable(model: Any) -> bool:
    """Whether `claim_generator` can decode claims from `model`."""
    return isinstance(model, (ClaimGenerator, str, os.PathLike)) or callable(
        getattr(model, "chat", None)
    )


def claim_generator(model: Any, *, segmenter: ClaimSegmenter | None = None, **kw: Any) -> Any:
    """The generator for `model`: itself if it is one; HFClaimGenerator for an HFChatModel or a
    model name/path; ChatClaimGenerator for any other ChatModel."""
    _segmenter(segmenter)
    if isinstance(model, ClaimGenerator):
        return model
    from paperplug_llm import HFChatModel

    if isinstance(model, (str, os.PathLike, HFChatModel)):
        return HFClaimGenerator(model, segmenter=segmenter, **kw)
    if callable(getattr(model, "chat", None)):
        return ChatClaimGenerator(model, segmenter=segmenter, **kw)
    raise TypeError(
        f"cannot decode claims from {type(model).__name__}: give an HFChatModel, a model name or "
        "path, a ChatModel, or a ClaimGenerator"
    )
