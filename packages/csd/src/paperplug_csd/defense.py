"""CSD as a decode-stage Defense: `check(model)` returns, as the verdict's payload, a ChatModel
that decodes `model` under C-SafeGen, so `compose(CSD(...), monitor).wrap(model)` swaps it in
before the input, output and tool stages run."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from paperplug import Verdict
from paperplug.checks import check_context, check_scalar, check_type
from paperplug_csd.claims import ClaimSegmenter
from paperplug_csd.decoding import REFUSAL, ClaimStreamDecoder, CSDResult
from paperplug_csd.generators import _check_messages, decodable


class SafeDecodingChatModel:
    """A ChatModel whose replies are decoded by CSD: `stream` yields accepted claims, `chat`
    the whole reply; `last_report` holds the latest reply's CSDResult (resamples, backtracks,
    fallback, guard calls). A call without `seed` takes the next seed of the model's own
    generator, so a run is reproducible from the defense's `seed`."""

    def __init__(self, model: Any, decoder: ClaimStreamDecoder, *, seed: int = 0) -> None:
        self.model = model  # shown in repr; the decoder holds what decodes
        self.decoder = check_type(decoder, "decoder", ClaimStreamDecoder)
        self._seeds = np.random.default_rng(check_scalar(seed, "seed", "int", low=0))
        self.last_report: CSDResult | None = None

    def __repr__(self) -> str:
        return f"SafeDecodingChatModel({self.model!r}, tau={self.decoder.tau})"

    def stream(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> Iterator[str]:
        messages = _check_messages(messages)  # before a seed is drawn
        seed = kw.pop("seed", None)
        if seed is None:
            seed = int(self._seeds.integers(2**31))
        options = {k: v for k, v in kw.items() if v is not None}
        stream = self.decoder.stream(messages, seed=seed, **options)
        self.last_report = stream.result  # filled as the reply is decoded
        return iter(stream)

    def chat(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> str:
        return "".join(self.stream(messages, **kw))


class CSD:
    """Claim-based Stream Decoding as a Defense (stage "decode").

    `scorer`: anything `as_scorer` takes (a claim scorer, an output-stage Defense, a ChatModel
    judge, a function); None trains the embedded MiniLM guard on the spot. τ, the resample
    budget B and the backtracking depth as in `ClaimStreamDecoder`; `generator_kw` go to the
    claim generator (temperature, max_tokens, ...)."""

    stage = "decode"
    name = "csd"

    def __init__(
        self,
        scorer: Any = None,
        *,
        tau: float = 0.5,
        budget: int = 4,
        depth: int = 1,
        min_tokens: int = 5,
        max_claim_tokens: int = 64,
        refusal: str = REFUSAL,
        seed: int = 0,
        **generator_kw: Any,
    ) -> None:
        check_scalar(tau, "tau", low=0.0, high=1.0)
        check_scalar(budget, "budget", "int", low=0)
        check_scalar(depth, "depth", "int", low=0)
        check_scalar(min_tokens, "min_tokens", "int", low=1)
        check_scalar(max_claim_tokens, "max_claim_tokens", "int", low=1)
        check_type(refusal, "refusal", str)
        check_scalar(seed, "seed", "int")
        self.scorer, self.tau, self.budget, self.depth = scorer, float(tau), budget, depth
        self.segmenter = ClaimSegmenter(min_tokens, max_claim_tokens)
        self.refusal, self.seed, self.generator_kw = refusal, seed, generator_kw

    def decoder(self, model: Any) -> ClaimStreamDecoder:
        """The ClaimStreamDecoder of `model` under this defense's guard and settings."""
        if self.scorer is None:
            from paperplug_csd.embedded import train_guard

            self.scorer = train_guard()
        return ClaimStreamDecoder(
            model,
            self.scorer,
            tau=self.tau,
            budget=self.budget,
            depth=self.depth,
            segmenter=self.segmenter,
            refusal=self.refusal,
            **self.generator_kw,
        )

    def check(self, payload: Any, context: Mapping[str, Any] | None = None) -> Verdict:
        """Decode stage: `payload` is the chat model; the verdict's payload decodes it under CSD."""
        check_context(context)
        if not decodable(payload):
            raise TypeError(f"payload must be a chat model to decode, got {type(payload).__name__}")
        safe = SafeDecodingChatModel(payload, self.decoder(payload), seed=self.seed)
        return Verdict(
            payload=safe,
            valid=True,
            risk=0.0,
            reason="",
            details={"tau": self.tau, "budget": self.budget, "depth": self.depth},
        )
