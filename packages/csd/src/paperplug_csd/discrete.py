"""A discrete claim language model with known probabilities, where CSD's distribution can be
computed exactly (C-SafeGen's theorem, checked rather than assumed).

Claims come from a finite list; p(next | previous claim) is a table whose last column is the
end of the reply; replies hold at most `max_claims` claims. `target_distribution` is the
distribution CSD aims at (each claim drawn from p(c | prefix, c accepted by the guard));
`csd_distribution` is the exact distribution of what `ClaimStreamDecoder` outputs with a
resample budget and backtracking, including its refusal fallbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from paperplug.checks import (
    check_array,
    check_callable,
    check_scalar,
    check_sequence,
    check_type,
)
from paperplug_csd.claims import Claim

REFUSED = -1  # the last element of an output that ended in the refusal fallback
Accept = Callable[[tuple[int, ...], int], bool]  # (prefix claim indices, claim index) -> g ≤ τ


class DiscreteClaimLM:
    """Claims `claims[i]`; `first[i]` = p(first claim i) and `transition[i, j]` = p(claim j
    after claim i), with index len(claims) meaning the end of the reply, in both."""

    def __init__(
        self,
        claims: Sequence[str],
        first: Sequence[float],
        transition: Any,
        *,
        max_claims: int = 3,
    ) -> None:
        claims = check_sequence(claims, "claims", str, what="strings")
        k = len(claims)
        first_p = check_array(first, "first", ndim=1)
        table = check_array(transition, "transition", ndim=2)
        if first_p.shape != (k + 1,) or table.shape != (k, k + 1):
            raise ValueError(
                f"first must have {k + 1} entries and transition shape ({k}, {k + 1}) (the last "
                f"column is the end); got {first_p.shape} and {table.shape}"
            )
        for name, p in (("first", first_p), ("transition", table)):
            if (p < 0).any() or not np.allclose(p.sum(-1), 1.0):
                raise ValueError(f"{name} must hold probabilities summing to 1 per row")
        check_scalar(max_claims, "max_claims", "int", low=1)
        self.claims, self.first, self.transition = list(claims), first_p, table
        self.max_claims, self.end = max_claims, k

    def probs(self, prefix: tuple[int, ...]) -> np.ndarray:
        """p(next | prefix) over the claims and the end (index len(claims))."""
        for j, i in enumerate(check_sequence(prefix, "prefix", min_len=0)):
            check_scalar(i, f"prefix[{j}]", "int", low=0, high=self.end - 1)
        if len(prefix) >= self.max_claims:
            out = np.zeros(self.end + 1)
            out[self.end] = 1.0
            return out
        return self.first if not prefix else self.transition[prefix[-1]]

    def claim_text(self, i: int) -> str:
        """Claim i as the model emits it (followed by a space, as LM sentences are)."""
        check_scalar(i, "i", "int", low=0, high=self.end - 1)
        return self.claims[i] + " "

    def start(
        self, messages: Any = None, seed: int | None = None, **options: Any
    ) -> DiscreteSession:
        """A session that draws claims from this model (the ClaimGenerator protocol)."""
        if options:
            raise TypeError(f"a DiscreteClaimLM takes no decoding options, got {sorted(options)}")
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        return DiscreteSession(self, np.random.default_rng(seed))


class DiscreteSession:
    """Draws claims of a DiscreteClaimLM; `token_ids` of a claim hold its index."""

    def __init__(self, lm: DiscreteClaimLM, rng: np.random.Generator) -> None:
        self.lm, self.rng, self.prefix, self.tokens = lm, rng, (), 0

    def draw(self) -> Claim:
        p = self.lm.probs(self.prefix)
        i = int(self.rng.choice(len(p), p=p))
        if i == self.lm.end:
            return Claim("", [], True)
        self.tokens += 1
        return Claim(self.lm.claim_text(i), [i], len(self.prefix) + 1 >= self.lm.max_claims)

    def accept(self, claim: Claim) -> None:
        self.prefix = (*self.prefix, int(claim.token_ids[0]))

    def pop(self) -> None:
        if not self.prefix:
            raise ValueError("no accepted claim to pop")
        self.prefix = self.prefix[:-1]


def accept_from(lm: DiscreteClaimLM, scorer: Any, tau: float, prompt: str = "") -> Accept:
    """The guard's decision g ≤ τ as a function of (prefix indices, claim index)."""
    from paperplug_csd.scorers import as_scorer

    check_type(lm, "lm", DiscreteClaimLM)
    g = as_scorer(scorer, "scorer")
    check_scalar(tau, "tau", low=0.0, high=1.0)
    check_type(prompt, "prompt", str)

    def accept(prefix: tuple[int, ...], claim: int) -> bool:
        text = "".join(lm.claim_text(i) for i in prefix)
        return g.score_claim(prompt, text, lm.claim_text(claim)) <= tau

    return accept


def _check_model(lm: Any, accept: Any) -> None:
    check_type(lm, "lm", DiscreteClaimLM)
    check_callable(accept, "accept", what="function (prefix, claim) -> bool (accept_from)")


def _add(out: dict, scale: float, dist: Mapping) -> None:
    for key, p in dist.items():
        out[key] = out.get(key, 0.0) + scale * p


def target_distribution(lm: DiscreteClaimLM, accept: Accept) -> dict[tuple[int, ...], float]:
    """Outputs of claim-wise rejection sampling with no limit: each claim drawn from
    p(c | prefix, accepted); the end of the reply is never judged (C-SafeGen's target)."""
    _check_model(lm, accept)

    @cache
    def dist(prefix: tuple[int, ...]) -> dict:
        p = lm.probs(prefix)
        ok = [c for c in range(lm.end) if p[c] > 0 and accept(prefix, c)]
        mass = p[lm.end] + sum(p[c] for c in ok)
        if mass <= 0:
            raise ValueError(f"after {prefix} every claim is rejected and the end has no mass")
        out = {prefix: p[lm.end] / mass} if p[lm.end] > 0 else {}
        for c in ok:
            _add(out, p[c] / mass, dist((*prefix, c)))
        return out

    return dict(dist(()))


def csd_distribution(
    lm: DiscreteClaimLM, accept: Accept, *, budget: int = 4, depth: int = 1
) -> tuple[dict[tuple[int, ...], float], float]:
    """(exact distribution of CSD's outputs, P(the resample budget runs out at least once)).

    Mirrors `ClaimStreamDecoder`: a rejected claim is redrawn up to `budget` times; then the
    last accepted claim is popped (at most `depth` times per reply); then the reply ends in the
    refusal (an output ending in REFUSED). Until the budget first runs out, CSD and the
    unlimited sampler make the same draws, so TV(CSD, target) ≤ the second number."""
    _check_model(lm, accept)
    check_scalar(budget, "budget", "int", low=0)
    check_scalar(depth, "depth", "int", low=0)

    @cache
    def dist(prefix: tuple[int, ...], tries: int, pops_left: int) -> tuple[dict, float]:
        p = lm.probs(prefix)
        out: dict = {}
        exhausted = 0.0
        for c in range(lm.end + 1):
            if p[c] == 0:
                continue
            if c == lm.end:
                _add(out, p[c], {prefix: 1.0})
                continue
            if accept(prefix, c):
                sub, ex = dist((*prefix, c), 0, pops_left)
                _add(out, p[c], sub)
                exhausted += p[c] * ex
                continue
            if tries < budget:
                sub, ex = dist(prefix, tries + 1, pops_left)
                _add(out, p[c], sub)
                exhausted += p[c] * ex
                continue
            exhausted += p[c]
            if pops_left > 0 and prefix:
                sub, _ = dist(prefix[:-1], 0, pops_left - 1)
                _add(out, p[c], sub)
            else:
                _add(out, p[c], {(*prefix, REFUSED): 1.0})
        return out, exhausted

    out, exhausted = dist((), 0, depth)
    return dict(out), exhausted


def total_variation(p: Mapping, q: Mapping) -> float:
    """½ Σ |p − q| over the union of outcomes."""
    for name, dist in (("p", p), ("q", q)):
        check_type(dist, name, Mapping, what="a mapping outcome -> probability")
        for key, value in dist.items():
            check_scalar(value, f"{name}[{key!r}]", low=0.0, high=1.0)
    keys = set(p) | set(q)
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in keys)
