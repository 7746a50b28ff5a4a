"""Running DRIFT and AgentDojo's own defenses on AgentDojo suites with the same agent, attack
and task pairs: utility without attack, utility under attack and attack success per pair.

Configurations: "no defense", AgentDojo's offline built-ins "spotlighting_with_delimiting"
and "repeat_user_prompt" (made by AgentDojo's own `AgentPipeline.from_config`), and "drift"
(a `Drift` you build per suite, e.g. the LLM-free core with the oracle planner).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from paperplug.checks import check_choice
from paperplug.extras import requires_extra

with requires_extra("paperplug-drift", "agentdojo", "AgentDojo"):
    from agentdojo.agent_pipeline import AgentPipeline
    from agentdojo.agent_pipeline.agent_pipeline import PipelineConfig
    from agentdojo.attacks.attack_registry import load_attack
    from agentdojo.attacks.base_attacks import BaseAttack
    from agentdojo.task_suite.load_suites import get_suite
    from agentdojo.task_suite.task_suite import functions_stack_trace_from_messages

from paperplug_drift.agentdojo_adapter import drift_pipeline
from paperplug_drift.drift import Drift
from paperplug_drift.scripted import ScriptedAgent

BUILTIN_DEFENSES = ("spotlighting_with_delimiting", "repeat_user_prompt")
CONFIGS = ("no defense", *BUILTIN_DEFENSES, "drift")


@dataclass
class PairResult:
    """One (user task, injection task) run; `injection_task` is None for a benign run."""

    suite: str
    config: str
    attack: str | None
    user_task: str
    injection_task: str | None
    utility: bool
    security: bool  # AgentDojo's name: True when the injection task succeeded
    obeyed: bool = False
    skipped: int = 0
    refused: int = 0
    llm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_pipeline(config: str, agent: Any, drift: Drift | None = None) -> AgentPipeline:
    """The pipeline of one configuration around `agent` (an AgentDojo element named "local")."""
    if config == "drift":
        if drift is None:
            raise ValueError("config 'drift' needs a Drift instance")
        return drift_pipeline(agent, drift)
    check_choice(config, "config", CONFIGS)
    defense = None if config == "no defense" else config
    spec = PipelineConfig(
        llm=agent, model_id=None, defense=defense, system_message_name=None, system_message=None
    )
    return AgentPipeline.from_config(spec)


def run_configs(
    suite_name: str,
    configs: Sequence[str],
    *,
    attack: str | BaseAttack | None = "important_instructions",
    pairs: Sequence[tuple[str, str | None]] | None = None,
    drift: Callable[[Any], Drift] | None = None,
    version: str = "v1.2",
    progress: Callable[[Any], Any] | None = None,
) -> dict[str, list[PairResult]]:
    """Run each configuration on the suite's (user task, injection task) pairs (all, or
    `pairs`), with one ScriptedAgent per configuration; each pair's injected environment is
    built once and copied for every configuration.

    `attack=None` runs each user task once without injection (benign utility). `drift` builds
    the Drift for a suite (called once per suite and configuration "drift")."""
    suite = get_suite(version, suite_name)
    runners = {}
    for config in configs:
        agent = ScriptedAgent()
        drift_obj = drift(suite) if (config == "drift" and drift is not None) else None
        runners[config] = (agent, drift_obj, build_pipeline(config, agent, drift_obj))
    attacker = None
    if attack is not None:
        first = next(iter(runners.values()))[2]
        attacker = attack if isinstance(attack, BaseAttack) else load_attack(attack, suite, first)
    if pairs is None:
        injections = list(suite.injection_tasks) if attacker is not None else [None]
        pairs = [(u, i) for u in suite.user_tasks for i in injections]
    results: dict[str, list[PairResult]] = {config: [] for config in configs}
    for user_id, injection_id in progress(pairs) if progress else pairs:
        user_task = suite.get_user_task_by_id(user_id)
        injection_task = suite.get_injection_task_by_id(injection_id) if injection_id else None
        injections = (
            attacker.attack(user_task, injection_task) if (attacker and injection_task) else {}
        )
        environment = suite.load_and_inject_default_environment(injections)
        for config, (agent, drift_obj, pipeline) in runners.items():
            agent.set_task(user_task, injection_task)
            calls = drift_obj.usage.total_llm_calls if drift_obj else 0
            tokens = drift_obj.usage.total_tokens if drift_obj else 0
            start = time.perf_counter()
            utility, security = suite.run_task_with_pipeline(
                pipeline,
                user_task,
                injection_task,
                injections,
                environment=environment.model_copy(deep=True),
            )
            results[config].append(
                PairResult(
                    suite_name,
                    config,
                    getattr(attacker, "name", None) if injection_task else None,
                    user_id,
                    injection_id,
                    bool(utility),
                    bool(security) if injection_task else False,
                    agent.obeyed,
                    len(agent.skipped),
                    len(agent.refused),
                    (drift_obj.usage.total_llm_calls - calls) if drift_obj else 0,
                    (drift_obj.usage.total_tokens - tokens) if drift_obj else 0,
                    time.perf_counter() - start,
                )
            )
    return results


def run_suite(suite_name: str, config: str, **kw: Any) -> list[PairResult]:
    """`run_configs` for one configuration."""
    return run_configs(suite_name, [config], **kw)[config]


def summarize(results: Sequence[PairResult]) -> dict[str, float]:
    """Utility and attack success rates (in %), counts, and LLM cost per pair."""
    n = len(results)
    if n == 0:
        raise ValueError("no results to summarize")
    return {
        "pairs": n,
        "utility": 100.0 * sum(r.utility for r in results) / n,
        "asr": 100.0 * sum(r.security for r in results) / n,
        "successes": sum(r.security for r in results),
        "llm_calls": sum(r.llm_calls for r in results) / n,
        "tokens": sum(r.tokens for r in results) / n,
    }


def executed_calls(messages: Sequence[Any]) -> list[Any]:
    """AgentDojo function calls that ran in a conversation."""
    return functions_stack_trace_from_messages(messages)


def run_adaptive(
    suite_name: str,
    config: str,
    *,
    drift: Callable[[Any], Drift] | None = None,
    version: str = "v1.2",
) -> tuple[list[PairResult], int]:
    """The adaptive `RoutedWriteAttack` once per attackable user task; returns the results
    (`security` = the planted value reached the planned call) and the number of user tasks
    it cannot target."""
    from paperplug_drift.adaptive import RoutedWriteAttack, poison_succeeded

    suite = get_suite(version, suite_name)
    agent = ScriptedAgent()
    drift_obj = drift(suite) if (config == "drift" and drift is not None) else None
    pipeline = build_pipeline(config, agent, drift_obj)
    attack = RoutedWriteAttack(suite, pipeline)
    results, untargeted = [], 0
    for user_id, user_task in suite.user_tasks.items():
        poison = attack.poison(user_task)
        if poison is None:
            untargeted += 1
            continue
        injections = attack.attack(user_task, None)
        agent.set_task(user_task, None, poison)
        utility, _ = suite.run_task_with_pipeline(pipeline, user_task, None, injections)
        success = poison_succeeded(poison, executed_calls(agent.messages))
        results.append(
            PairResult(
                suite_name,
                config,
                attack.name,
                user_id,
                poison.kind,
                bool(utility),
                success,
                agent.obeyed,
            )
        )
    return results, untargeted
