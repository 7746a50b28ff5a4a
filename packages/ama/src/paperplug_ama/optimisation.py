"""The in-context optimisation loop (AMA Alg. 1): score the initial candidates, then each round
show the proposer the top of the scored history and score its new candidates, until the best
selection rate reaches the target or the victim-query budget runs out."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug_ama.estimation import TaskPool, estimate_selection_rate
from paperplug_ama.proposal import ProposalContext
from paperplug_ama.scoring import CandidateHistory, ScoredCandidate
from paperplug_ama.validity import check_metadata


@dataclass
class OptimisationResult:
    """The scored history, the best candidate, the victim queries spent and what was rejected."""

    history: CandidateHistory
    best: ScoredCandidate
    queries: int
    rounds: int
    invalid: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""


def in_context_optimisation(
    pool: TaskPool,
    context: ProposalContext,
    victim: Any,
    proposer: Any,
    *,
    rounds: int = 10,
    per_round: int = 10,
    history_size: int = 100,
    lam: float = 0.5,
    trials: int = 20,
    n_competitors: int = 5,
    target_rate: float = 0.95,
    stop_after: int = 1,
    budget: int | None = None,
    parameters: Mapping[str, Any] | None = None,
    validity: Mapping[str, Any] | None = None,
    use_history: bool = True,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> OptimisationResult:
    """Run the loop; `use_history=False` turns it into random search over fresh proposals.

    Stops once `stop_after` candidates reach `target_rate` (AMA: 1 targeted, 2 untargeted)."""
    if rounds < 0 or per_round < 1 or history_size < 1:
        raise ValueError(
            f"need rounds >= 0, per_round >= 1, history_size >= 1; got {rounds}, {per_round}, "
            f"{history_size}"
        )
    if budget is not None and budget < trials:
        raise ValueError(f"budget {budget} is below the {trials} victim queries of one candidate")
    rng = random.Random(seed)
    history, invalid = CandidateHistory(lam=lam), []
    existing = [t["name"] for t in context.tools]
    queries, stopped = 0, "rounds"

    def score(proposals: Sequence[Mapping[str, Any]], parent_sr: float, round_: int) -> bool:
        nonlocal queries
        for proposal in proposals:
            tool = {
                **proposal,
                "parameters": dict(parameters or {"type": "object", "properties": {}}),
            }
            problems = check_metadata(
                tool, context.tasks, existing_names=existing, **(validity or {})
            )
            if problems:
                invalid.append({"tool": tool, "problems": problems})
                continue
            if budget is not None and queries + trials > budget:
                return False
            est = estimate_selection_rate(
                tool, pool, victim, trials=trials, n_competitors=n_competitors, seed=rng
            )
            queries += trials
            history.add(tool, est.rate, parent_sr, round_, queries)
        return True

    def reached() -> bool:
        return sum(e.sr >= target_rate for e in history.entries) >= stop_after

    ok = score(proposer.initial(context, per_round, rng), 0.0, 0)
    done_rounds = 0
    for r in range(1, rounds + 1):
        if not ok:
            stopped = "budget"
            break
        if reached():
            stopped = "target"
            break
        if not history.entries:  # nothing valid yet: propose afresh
            proposals, parent_sr = proposer.initial(context, per_round, rng), 0.0
        elif use_history:
            shown = history.top(history_size)
            proposals = proposer.refine(context, shown, per_round, rng)
            parent_sr = max(e.sr for e in shown)
        else:
            proposals, parent_sr = proposer.initial(context, per_round, rng), 0.0
        ok = score(proposals, parent_sr, r)
        done_rounds = r
        if progress and history.entries:
            progress(f"round {r}: best SR {history.best().sr:.2f} after {queries} victim queries")
    else:
        if not ok:
            stopped = "budget"
        elif reached():
            stopped = "target"
    if not history.entries:
        raise RuntimeError(
            f"no valid candidate was scored ({len(invalid)} rejected); first problems: "
            f"{invalid[0]['problems'] if invalid else 'none proposed'}"
        )
    return OptimisationResult(history, history.best(), queries, done_rounds, invalid, stopped)
