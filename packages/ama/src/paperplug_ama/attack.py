"""AMAttack: the Attractive Metadata Attack as a paperplug Attack (stage "tool").

`run(victim, scenarios, budget=...)` optimises attack-tool metadata on the attacker-visible
queries and reports success per held-out query; each adversarial item is the tool's metadata
(name, description, hidden parameter schema) plus the query it was tested on, so a tool-stage
guard can inspect it; `assess` re-scores what a guard let through (rewritten or not)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from paperplug import AttackResult
from paperplug.checks import check_callable, check_choice, check_scalar, check_sequence, check_type
from paperplug_ama.estimation import task_pool
from paperplug_ama.evaluation import benign_accuracy, held_out_choices, selects_attack
from paperplug_ama.metadata import as_tool
from paperplug_ama.optimisation import in_context_optimisation
from paperplug_ama.privacy import DEFAULT_FIELDS, hidden_parameter_schema
from paperplug_ama.proposal import ProposalContext
from paperplug_ama.scenarios import Scenario, load_scenarios, scenario_from_dict


def as_scenarios(inputs: Any) -> list[Scenario]:
    """Scenarios from a Scenario, a dict, a list of either, or None (the embedded ten)."""
    if inputs is None:
        return load_scenarios()
    if isinstance(inputs, (Scenario, Mapping)):
        inputs = [inputs]
    if not isinstance(inputs, Sequence) or isinstance(inputs, str) or not inputs:
        raise TypeError(f"inputs must be a Scenario, a dict or a non-empty list, got {inputs!r}")
    return [s if isinstance(s, Scenario) else scenario_from_dict(s) for s in inputs]


class AMAttack:
    """AMA with the paper's defaults: 10 rounds of 10 candidates, top-100 history, λ = 0.5,
    20 trials per selection rate, target rate 0.95 (targeted; 0.8 and two tools untargeted);
    plus our noise controls: shared trials within a round and a final race of the top 5.

    `proposer`: "template" (offline phrase bank), a ChatModel (LLM proposer) or a Proposer.
    Targeted mode optimises one tool per scenario; untargeted one tool over all of them.
    `budget` (victim queries) is shared equally between the targeted scenarios."""

    stage = "tool"

    def __init__(
        self,
        proposer: Any = "template",
        *,
        mode: str = "targeted",
        rounds: int = 10,
        per_round: int = 10,
        history_size: int = 100,
        lam: float = 0.5,
        trials: int = 20,
        n_competitors: int = 5,
        target_rate: float | None = None,
        hidden_fields: Sequence[str] = DEFAULT_FIELDS,
        use_history: bool = True,
        common_trials: bool = True,
        race_top: int = 5,
        seed: int = 0,
        progress: Any = None,
    ) -> None:
        check_choice(mode, "mode", ("targeted", "untargeted"))
        for name, value in (("rounds", rounds), ("per_round", per_round), ("trials", trials),
                            ("history_size", history_size), ("race_top", race_top)):  # fmt: skip
            check_scalar(value, name, "int", low=1)
        check_scalar(n_competitors, "n_competitors", "int", low=0)
        check_scalar(lam, "lam", low=0.0, high=1.0)
        check_scalar(target_rate, "target_rate", low=0.0, high=1.0, allow_none=True)
        check_scalar(seed, "seed", "int")
        hidden_fields = check_sequence(hidden_fields, "hidden_fields", str, min_len=0)
        check_type(use_history, "use_history", bool)
        check_type(common_trials, "common_trials", bool)
        if progress is not None:
            check_callable(progress, "progress")
        self.proposer, self.mode = proposer, mode
        self.rounds, self.per_round, self.history_size = rounds, per_round, history_size
        self.lam, self.trials, self.n_competitors = lam, trials, n_competitors
        self.target_rate = (
            target_rate if target_rate is not None else (0.95 if mode == "targeted" else 0.8)
        )
        self.hidden_fields, self.use_history = tuple(hidden_fields), use_history
        self.common_trials, self.race_top = common_trials, race_top
        self.seed, self.progress = seed, progress
        self.parameters = hidden_parameter_schema(self.hidden_fields) if hidden_fields else None
        self._held_out: list[tuple[Any, Any, int]] = []

    def _proposer(self) -> Any:
        if self.proposer == "template":
            from paperplug_ama.template_proposer import TemplateProposer

            return TemplateProposer()
        if callable(getattr(self.proposer, "refine", None)):
            return self.proposer
        if callable(getattr(self.proposer, "chat", None)):
            from paperplug_ama.llm_proposer import LLMProposer

            return LLMProposer(self.proposer)
        raise TypeError("proposer must be 'template', a ChatModel or an object with initial/refine")

    def _victim(self, target: Any) -> Any:
        if isinstance(target, str):
            from paperplug_ama.victims import load_victim

            return load_victim(target)
        if not callable(getattr(target, "select", None)):
            raise TypeError("target must be a victim with select(query, tools) or a victim name")
        return target

    def _groups(self, scenarios: list[Scenario]) -> list[list[Scenario]]:
        return [[s] for s in scenarios] if self.mode == "targeted" else [scenarios]

    def run(self, target: Any, inputs: Any = None, *, budget: int | None = None) -> AttackResult:
        """Optimise on the optimisation queries; success per held-out query (never the optimised ones)."""
        check_scalar(budget, "budget", "int", low=1, allow_none=True)
        victim, proposer = self._victim(target), self._proposer()
        scenarios = as_scenarios(inputs)
        groups = self._groups(scenarios)
        share = None if budget is None else budget // len(groups)
        adversarial, success, queries, per_group, self._held_out = [], [], 0, [], []
        for g, group in enumerate(groups):
            pool = task_pool(group, "optimise")
            context = ProposalContext(
                tasks=[t.query for t, _ in pool],
                tools=[t for s in group for t in s.tools],
                mode=self.mode,
                domains=[s.domain for s in group],
            )
            result = in_context_optimisation(
                pool,
                context,
                victim,
                proposer,
                rounds=self.rounds,
                per_round=self.per_round,
                history_size=self.history_size,
                lam=self.lam,
                trials=self.trials,
                n_competitors=self.n_competitors,
                target_rate=self.target_rate,
                stop_after=1 if self.mode == "targeted" else 2,
                budget=share,
                parameters=self.parameters,
                use_history=self.use_history,
                common_trials=self.common_trials,
                race_top=self.race_top,
                seed=self.seed + g,
                progress=self.progress,
            )
            queries += result.queries
            best = result.best.tool
            held = task_pool(group, "held_out")
            choices = held_out_choices(best, held, victim, seed=self.seed)
            flags = [hit for hit, _ in choices]
            for i, ((task, _), hit) in enumerate(zip(held, flags, strict=True)):
                adversarial.append({**best, "query": task.query})
                success.append(hit)
                self._held_out.append((task, held[i][1], i))
            per_group.append(
                {
                    "domains": [s.domain for s in group],
                    "tool": best,
                    "train_sr": result.best.sr,
                    "held_out_asr": sum(flags) / len(flags),
                    "benign_accuracy": benign_accuracy(held, victim, seed=self.seed),
                    "utility": sum(gold for _, gold in choices) / len(choices),
                    "queries": result.queries,
                    "stopped": result.stopped,
                    "invalid": len(result.invalid),
                    "curve": result.history.best_so_far(),
                    "history": [e.to_dict() for e in result.history.entries],
                }
            )
        return AttackResult(
            adversarial=adversarial,
            success=success,
            queries=queries,
            meta={"mode": self.mode, "groups": per_group, "held_out": True},
        )

    def assess(self, target: Any, payload: Sequence[Any]) -> list[bool]:
        """Success per held-out query of the last run on the metadata a guard passed on
        (rewritten or not); None marks an item the guard blocked (`paperplug.evaluate`)."""
        victim = self._victim(target)
        if len(payload) != len(self._held_out):
            raise ValueError(
                f"payload has {len(payload)} items; the last run had {len(self._held_out)}"
            )
        flags = []
        for item, (task, catalog, i) in zip(payload, self._held_out, strict=True):
            hit = item is not None and selects_attack(
                as_tool(item), task, catalog, victim, seed=self.seed, index=i
            )
            flags.append(hit)
        return flags
