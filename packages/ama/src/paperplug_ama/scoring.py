"""Scoring and the history of scored candidates: V = SR + λ(SR − SR_parent) (AMA, λ = 0.5)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import check_scalar, check_sequence, check_type

LAMBDA = 0.5


def attractiveness(sr: float, parent_sr: float, lam: float = LAMBDA) -> float:
    """V = SR + λ(SR − SR_parent): the selection rate plus a bonus for improving on the parent."""
    sr = check_scalar(sr, "sr", low=0.0, high=1.0)
    parent_sr = check_scalar(parent_sr, "parent_sr", low=0.0, high=1.0)
    return sr + check_scalar(lam, "lam", low=0.0) * (sr - parent_sr)


@dataclass
class ScoredCandidate:
    """One evaluated candidate: its metadata, selection rate, parent's rate and value V."""

    tool: dict[str, Any]
    sr: float
    parent_sr: float
    value: float
    round: int
    queries: int  # cumulative victim queries once this candidate was scored

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.tool["name"],
            "description": self.tool["description"],
            "sr": self.sr,
            "parent_sr": self.parent_sr,
            "value": self.value,
            "round": self.round,
            "queries": self.queries,
        }


@dataclass
class CandidateHistory:
    """All scored candidates in order; `top` feeds the proposer, `best` is the attack's answer."""

    lam: float = LAMBDA
    entries: list[ScoredCandidate] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_scalar(self.lam, "lam", low=0.0)
        check_sequence(self.entries, "entries", ScoredCandidate, min_len=0, what="ScoredCandidates")

    def add(
        self, tool: Mapping[str, Any], sr: float, parent_sr: float, round: int, queries: int
    ) -> ScoredCandidate:
        check_type(tool, "tool", Mapping, what="a tool mapping")
        check_scalar(round, "round", "int", low=0)
        check_scalar(queries, "queries", "int", low=0)
        entry = ScoredCandidate(
            dict(tool), sr, parent_sr, attractiveness(sr, parent_sr, self.lam), round, queries
        )
        self.entries.append(entry)
        return entry

    def __len__(self) -> int:
        return len(self.entries)

    def top(self, k: int) -> list[ScoredCandidate]:
        """The k entries of highest V (earlier first among equals)."""
        k = check_scalar(k, "k", "int", low=1)
        return sorted(self.entries, key=lambda e: -e.value)[:k]

    def best(self) -> ScoredCandidate:
        """The entry of highest selection rate (earlier first among equals)."""
        if not self.entries:
            raise ValueError("the history is empty: no candidate was scored")
        return max(self.entries, key=lambda e: e.sr)  # max keeps the first maximum

    def best_so_far(self) -> list[tuple[int, float]]:
        """(victim queries, best SR so far) after each scored candidate: monotone by construction."""
        curve, best = [], 0.0
        for e in self.entries:
            best = max(best, e.sr)
            curve.append((e.queries, best))
        return curve
