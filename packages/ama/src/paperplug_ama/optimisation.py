"""The in-context optimisation loop (AMA; in its code, generate_tool_metadata.py): score the
initial candidates, then each round show the proposer the top of the scored history and score its
new candidates, until the best selection rate reaches the target or the victim-query budget runs
out; then race the top few on fresh trials to pick the answer."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import check_callable, check_choice, check_scalar, check_type
from paperplug_ama.arguments import check_pool, check_victim
from paperplug_ama.estimation import TaskPool, estimate_selection_rate
from paperplug_ama.metadata import make_tool
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
    race: list[dict[str, Any]] = field(default_factory=list)


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
    common_trials: bool = True,
    race_top: int = 5,
    race_trials: int | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> OptimisationResult:
    """Run the loop; `use_history=False` turns it into random search over fresh proposals.

    Stops once `stop_after` candidates reach `target_rate` (AMA: 1 targeted, 2 untargeted).
    `common_trials`: a round's candidates share their trials (common random numbers). The
    answer is the best of the `race_top` highest-SR candidates re-estimated on `race_trials`
    fresh shared trials (pooled with their first ones); the race's queries count in `budget`."""
    pool = check_pool(pool)
    check_type(context, "context", ProposalContext)
    check_victim(victim)
    for method in ("initial", "refine"):
        if not callable(getattr(proposer, method, None)):
            raise TypeError(
                f"proposer must have initial() and refine(), got {type(proposer).__name__}"
            )
    ints = {"rounds": (rounds, 0), "per_round": (per_round, 1), "history_size": (history_size, 1),
            "trials": (trials, 1), "n_competitors": (n_competitors, 1), "stop_after": (stop_after, 1),
            "race_top": (race_top, 0), "seed": (seed, 0)}  # fmt: skip
    for name, (value, low) in ints.items():
        check_scalar(value, name, "int", low=low)
    check_scalar(race_trials, "race_trials", "int", low=1, allow_none=True)
    check_scalar(budget, "budget", "int", low=1, allow_none=True)
    check_scalar(target_rate, "target_rate", low=0.0, high=1.0)
    check_type(use_history, "use_history", bool)
    check_type(common_trials, "common_trials", bool)
    if progress is not None:
        check_callable(progress, "progress")
    if parameters is not None:
        make_tool("check", "the parameters", check_type(parameters, "parameters", Mapping))
    for key, value in check_type(validity or {}, "validity", Mapping).items():
        check_choice(key, "validity's keys", ("max_words", "ngram"))
        check_scalar(value, f"validity[{key!r}]", "int", low=1)
    if budget is not None and budget < trials:
        raise ValueError(f"budget {budget} is below the {trials} victim queries of one candidate")
    race_trials = trials if race_trials is None else race_trials
    if budget is not None:  # the race's share, shrunk so that one candidate still fits
        race_top = min(race_top, (budget - trials) // race_trials)
    race_top = race_top if race_top >= 2 else 0
    spend = None if budget is None else budget - race_top * race_trials
    rng = random.Random(seed)
    history, invalid = CandidateHistory(lam=lam), []
    existing = [t["name"] for t in context.tools]
    queries, stopped = 0, "rounds"

    def score(proposals: Sequence[Mapping[str, Any]], parent_sr: float, round_: int) -> bool:
        nonlocal queries
        shared = rng.randrange(2**32)
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
            if spend is not None and queries + trials > spend:
                return False
            est = estimate_selection_rate(
                tool,
                pool,
                victim,
                trials=trials,
                n_competitors=n_competitors,
                seed=shared if common_trials else rng,
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
    best, race = race_best(
        history,
        pool,
        victim,
        top=race_top,
        trials=race_trials,
        first_trials=trials,
        n_competitors=n_competitors,
        seed=rng.randrange(2**32),
    )
    queries += len(race) * race_trials
    return OptimisationResult(history, best, queries, done_rounds, invalid, stopped, race)


def race_best(
    history: CandidateHistory,
    pool: TaskPool,
    victim: Any,
    *,
    top: int = 5,
    trials: int = 20,
    first_trials: int = 20,
    n_competitors: int = 5,
    seed: int = 0,
) -> tuple[ScoredCandidate, list[dict[str, Any]]]:
    """Re-estimate the `top` highest-SR candidates on the same `trials` fresh trials and return
    the one of highest SR pooled over both estimates (a racing step, so one lucky estimate does
    not decide) and the race's record; with top < 2 the history's best is kept, unraced."""
    check_type(history, "history", CandidateHistory)
    pool = check_pool(pool)
    check_victim(victim)
    for name, value, low in (("top", top, 0), ("trials", trials, 1),
                             ("first_trials", first_trials, 1),
                             ("n_competitors", n_competitors, 1), ("seed", seed, 0)):  # fmt: skip
        check_scalar(value, name, "int", low=low)
    ranked = sorted(history.entries, key=lambda e: -e.sr)[:top]
    if top < 2 or len(ranked) < 2:
        return history.best(), []
    race = []
    for e in ranked:
        est = estimate_selection_rate(
            e.tool, pool, victim, trials=trials, n_competitors=n_competitors, seed=seed
        )
        pooled = (e.sr * first_trials + est.successes) / (first_trials + trials)
        race.append({"entry": e, "fresh_sr": est.rate, "pooled_sr": pooled})
    won = max(race, key=lambda r: r["pooled_sr"])  # max keeps the first (higher-SR) maximum
    e = won["entry"]
    return ScoredCandidate(e.tool, won["pooled_sr"], e.parent_sr, e.value, e.round, e.queries), race
