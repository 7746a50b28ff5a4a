"""Claim-based Stream Decoding (C-SafeGen §3, Algorithm 1 as reconstructed in the notes):
claim-level rejection sampling with rollback to the claim start, a resample budget B, then
backtracking over up to `depth` accepted claims, then the refusal fallback.

An accepted claim is an exact draw from p(c | x, y_<j, g ≤ τ): redraws are independent and
the first accepted one is kept. The fallback (budget and backtracking spent) is where CSD
departs from that target; its rate is reported as the bias (`discrete.csd_distribution`
computes both exactly on a discrete model).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug import to_jsonable
from paperplug.checks import check_scalar, check_type
from paperplug_csd.claims import ClaimSegmenter
from paperplug_csd.generators import _check_messages, claim_generator
from paperplug_csd.scorers import as_scorer

REFUSAL = "I can't help with that."


@dataclass
class CSDResult:
    """One reply: its text and accepted claims, with what it cost and whether it fell back."""

    text: str
    claims: list[str]
    fallback: bool = False
    n_guard_calls: int = 0
    n_rejected: int = 0
    n_resamples: int = 0
    n_backtracks: int = 0
    tokens: int = 0
    scores: list[float] = field(default_factory=list)  # every guard score, in order
    # token_ids[0] of each accepted claim: its index when the model is a DiscreteClaimLM
    claim_indices: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {k: to_jsonable(v) for k, v in self.__dict__.items()}


def _prompt_of(messages: Sequence[Mapping[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""


class ClaimStream:
    """Iterates the claims of one reply as they become final.

    With backtracking, the last `depth` accepted claims may still be popped, so they are held
    back until the reply ends or the backtracking allowance is spent. `result` is filled as
    the reply is decoded (counters live, text and claims so far), and final once iterated."""

    def __init__(self, decoder: ClaimStreamDecoder, messages: Any, seed: int | None, options):
        self.result = CSDResult("", [])
        self._events = decoder._run(messages, seed, options, self.result)

    def __iter__(self) -> Iterator[str]:
        yield from self._events


class ClaimStreamDecoder:
    """CSD: decode `model` claim by claim under the guard `scorer`, accepting a claim when its
    score g ≤ `tau`.

    `model`: an HFChatModel / model name or path (KV-cache rollback), any ChatModel (one
    request per claim), or a ClaimGenerator (e.g. `DiscreteClaimLM`). `scorer`: anything
    `as_scorer` takes. Defaults B=4 redraws and depth 1 follow the notes (§3 [R])."""

    def __init__(
        self,
        model: Any,
        scorer: Any,
        *,
        tau: float = 0.5,
        budget: int = 4,
        depth: int = 1,
        segmenter: ClaimSegmenter | None = None,
        refusal: str = REFUSAL,
        **generator_kw: Any,
    ) -> None:
        check_scalar(tau, "tau", low=0.0, high=1.0)
        check_scalar(budget, "budget", "int", low=0)
        check_scalar(depth, "depth", "int", low=0)
        check_type(refusal, "refusal", str)
        if segmenter is not None:
            check_type(segmenter, "segmenter", ClaimSegmenter)
        self.generator = claim_generator(model, segmenter=segmenter, **generator_kw)
        self.scorer = as_scorer(scorer, "scorer")
        self.tau, self.budget, self.depth, self.refusal = float(tau), budget, depth, refusal

    def _run(
        self, messages: Any, seed: int | None, options: dict[str, Any], result: CSDResult
    ) -> Generator[str, None, None]:
        messages = _check_messages(messages)
        prompt = _prompt_of(messages)
        session = self.generator.start(messages, seed, **options)
        accepted: list[Any] = []
        released = 0  # accepted claims already streamed (they can no longer be popped)
        tries = 0  # rejections at the current claim position
        while True:
            claim = session.draw()
            if claim.end and not claim.text.strip():
                break
            prefix = "".join(c.text for c in accepted)
            score = float(self.scorer.score_claim(prompt, prefix, claim.text))
            result.n_guard_calls += 1
            result.scores.append(score)
            if score <= self.tau:
                session.accept(claim)
                accepted.append(claim)
                tries = 0
                if claim.end:
                    break
                hold = self.depth - result.n_backtracks  # claims a later pop may still take
                while len(accepted) - released > hold:
                    released += 1
                    result.claims = [c.text for c in accepted[:released]]
                    result.text, result.tokens = "".join(result.claims), session.tokens
                    yield accepted[released - 1].text
                continue
            result.n_rejected += 1
            if tries < self.budget:
                tries += 1
                result.n_resamples += 1
            elif result.n_backtracks < self.depth and len(accepted) > released:
                session.pop()
                accepted.pop()
                result.n_backtracks += 1
                tries = 0
            else:
                result.fallback = True
                break
        texts = [c.text for c in accepted]
        result.claim_indices = [c.token_ids[0] for c in accepted if c.token_ids]
        result.tokens = session.tokens
        for i in range(released, len(accepted)):
            result.claims, result.text = texts[: i + 1], "".join(texts[: i + 1])
            yield texts[i]
        result.claims, result.text = texts, "".join(texts)
        if result.fallback:
            sep = "" if not texts or texts[-1].endswith(("\n", " ")) else " "
            refusal = (sep if texts else "") + self.refusal
            result.text += refusal
            yield refusal

    def stream(self, messages: Any, *, seed: int | None = None, **options: Any) -> ClaimStream:
        """The reply's claims as they become final (then the refusal, on fallback)."""
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        return ClaimStream(self, _check_messages(messages), seed, options)

    def generate(self, messages: Any, *, seed: int | None = None, **options: Any) -> CSDResult:
        """One reply to `messages` (a prompt string or chat messages), decoded under CSD."""
        stream = self.stream(messages, seed=seed, **options)
        for _ in stream:
            pass
        return stream.result
