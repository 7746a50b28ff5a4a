"""The embedded default: AgentDojo v1.2's banking, slack and travel suites offline, the
scripted agent attacked by `important_instructions`, four configurations side by side: no
defense, AgentDojo's offline built-ins (spotlighting with delimiting, repeat user prompt), and
DRIFT's LLM-free core with the oracle plan. Shared by demo.py and bench/run.py.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from paperplug.extras import requires_extra

SUITES = ("banking", "slack", "travel")
ALL_SUITES = ("banking", "slack", "travel", "workspace")
CONFIGS = ("no defense", "spotlighting_with_delimiting", "repeat_user_prompt", "drift")
LABELS = {
    "no defense": "no defense",
    "spotlighting_with_delimiting": "spotlighting (AgentDojo)",
    "repeat_user_prompt": "repeat prompt (AgentDojo)",
    "drift": "DRIFT core, oracle plan",
    "drift (query planner)": "DRIFT core, query planner",
}
DEMO_FRACTION = {"travel": 0.5}  # travel's runs are the slow ones: half its pairs in the demo


def oracle_drift(suite: Any) -> Any:
    """DRIFT's LLM-free core on a suite: oracle plan (the user task's ground-truth calls),
    name-heuristic privileges, StrictJudge, heuristic isolator."""
    from paperplug_drift.agentdojo_adapter import AgentDojoOracle
    from paperplug_drift.drift import Drift

    return Drift(planner=AgentDojoOracle(suite))


def query_drift(suite: Any) -> Any:
    """DRIFT's LLM-free core with a planner that sees only the user's query and the tool
    schemas (`QueryPlanner`, no ground truth); the rest as `oracle_drift`."""
    from paperplug_drift.drift import Drift
    from paperplug_drift.planner import QueryPlanner

    return Drift(planner=QueryPlanner())


def load_data(
    seed: int = 0, fractions: dict[str, float] | None = None, suites: Sequence[str] = SUITES
) -> dict[str, list[tuple[str, str]]]:
    """The (user task, injection task) pairs per suite: all of them, or a seeded sample of
    `fractions[suite]` of them (a local random.Random; the global one is untouched)."""
    with requires_extra("paperplug-drift", "agentdojo", "AgentDojo"):
        from agentdojo.task_suite.load_suites import get_suite

    fractions = DEMO_FRACTION if fractions is None else fractions
    pairs = {}
    for name in suites:
        suite = get_suite("v1.2", name)
        every = [(u, i) for u in suite.user_tasks for i in suite.injection_tasks]
        share = fractions.get(name, 1.0)
        if share < 1.0:
            keep = sorted(
                random.Random(f"{seed}-{name}").sample(range(len(every)), round(share * len(every)))
            )
            every = [every[k] for k in keep]
        pairs[name] = every
    return pairs


def run_table(
    pairs: dict[str, list[tuple[str, str]]],
    *,
    configs: Sequence[str] = CONFIGS,
    attack: str = "important_instructions",
    drift: Callable[[Any], Any] = oracle_drift,
    progress: Callable[[Any], Any] | None = None,
) -> list[dict[str, Any]]:
    """One row per (suite, configuration): benign utility (every user task, no attack),
    utility under attack and attack success on `pairs`, in % with counts."""
    from paperplug_drift.evaluation import run_configs, summarize

    rows = []
    for name, suite_pairs in pairs.items():
        benign = run_configs(name, configs, attack=None, drift=drift)
        attacked = run_configs(
            name, configs, attack=attack, pairs=suite_pairs, drift=drift, progress=progress
        )
        for config in configs:
            b, a = summarize(benign[config]), summarize(attacked[config])
            rows.append(
                {
                    "suite": name,
                    "config": LABELS.get(config, config),
                    "benign_utility": b["utility"],
                    "benign_ok": sum(r.utility for r in benign[config]),
                    "benign_n": len(benign[config]),
                    "attacked_utility": a["utility"],
                    "asr": a["asr"],
                    "successes": a["successes"],
                    "pairs": a["pairs"],
                    "llm_calls": a["llm_calls"],
                    "tokens": a["tokens"],
                }
            )
    return rows
