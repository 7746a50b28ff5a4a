"""The baselines CSD is measured beside, on the same generator, guard and seeds:

- `unguarded`: the model's reply as it samples it (the harmful base rate);
- `guard_then_refuse`: the whole reply scored once by the guard, refused if g > τ;
- `stop_rule`: SCM's streaming stop rule at claim level: the stream stops (and refuses) once
  k claims have scored g > τ (delay-k; k = 1 is the naive rule).
Each returns a CSDResult, so the benchmark reads every method the same way.
"""

from __future__ import annotations

from typing import Any

from paperplug.checks import check_scalar, check_type
from paperplug_csd.decoding import ClaimStreamDecoder, CSDResult, _prompt_of
from paperplug_csd.generators import _check_messages


class _Claims:
    """The reply's claims drawn with no guard; `tokens` counts what was generated."""

    def __init__(self, decoder: ClaimStreamDecoder, messages: Any, seed: int | None, options):
        check_type(decoder, "decoder", ClaimStreamDecoder)
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        self.session = decoder.generator.start(messages, seed, **options)

    @property
    def tokens(self) -> int:
        return self.session.tokens

    def __iter__(self):
        while True:
            claim = self.session.draw()
            if claim.end and not claim.text.strip():
                return
            yield claim
            self.session.accept(claim)
            if claim.end:
                return


def _finish(result: CSDResult, texts: list[str], refusal: str | None) -> CSDResult:
    result.claims = texts
    result.text = "".join(texts) if refusal is None else refusal
    return result


def unguarded(
    decoder: ClaimStreamDecoder, messages: Any, *, seed: int | None = None, **options: Any
) -> CSDResult:
    """The reply sampled with no guard (the same draws as CSD's first ones under `seed`)."""
    messages = _check_messages(messages)
    claims = _Claims(decoder, messages, seed, options)
    texts, indices = [], []
    for claim in claims:
        texts.append(claim.text)
        indices += claim.token_ids[:1]
    result = _finish(CSDResult("", []), texts, None)
    result.claim_indices, result.tokens = indices, claims.tokens
    return result


def guard_then_refuse(
    decoder: ClaimStreamDecoder, messages: Any, *, seed: int | None = None, **options: Any
) -> CSDResult:
    """Sample the whole reply, score it once as one text, refuse it if g > τ."""
    messages = _check_messages(messages)
    full = unguarded(decoder, messages, seed=seed, **options)
    score = float(decoder.scorer.score_claim(_prompt_of(messages), "", full.text))
    full.n_guard_calls, full.scores = 1, [score]
    if score > decoder.tau:
        full.fallback, full.text, full.claims, full.claim_indices = True, decoder.refusal, [], []
    return full


def stop_rule(
    decoder: ClaimStreamDecoder,
    messages: Any,
    *,
    k: int = 1,
    seed: int | None = None,
    **options: Any,
) -> CSDResult:
    """SCM's stop rule on claims: stream the reply, stop and refuse once k claims scored > τ
    (claims flagged before the k-th were already shown, as in a delay-k stream)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    messages = _check_messages(messages)
    prompt = _prompt_of(messages)
    result, texts, indices, flagged = CSDResult("", []), [], [], 0
    claims = _Claims(decoder, messages, seed, options)
    for claim in claims:
        score = float(decoder.scorer.score_claim(prompt, "".join(texts), claim.text))
        result.n_guard_calls += 1
        result.scores.append(score)
        flagged += score > decoder.tau
        if flagged >= k:
            result.fallback = True
            sep = " " if texts and not texts[-1].endswith((" ", "\n")) else ""
            result.claims, result.claim_indices = texts, indices
            result.text = "".join(texts) + sep + decoder.refusal
            result.tokens = claims.tokens
            return result
        texts.append(claim.text)
        indices += claim.token_ids[:1]
    result.claim_indices, result.tokens = indices, claims.tokens
    return _finish(result, texts, None)
