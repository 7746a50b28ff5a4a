"""DRIFT (NeurIPS 2025): dynamic rule-based defense with injection isolation for tool-using
LLM agents: Secure Planner, Dynamic Validator, Injection Isolator.

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch or AgentDojo. The AgentDojo adapter and the scripted agent need
the `[agentdojo]` extra: `pip install 'paperplug-drift[agentdojo]'`; the learned detectors
(`TunedDetector`: `detector="learned"` or `"both"`; the probe `LearnedDetector`:
`detector="probe"`) and the per-unit LLM detector (`LLMUnitDetector`) the `[learned]` extra.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DriftAgent": ".agent",
        "DriftResult": ".agent",
        "ToolRun": ".agent",
        "AgentDojoOracle": ".agentdojo_adapter",
        "DriftElement": ".agentdojo_adapter",
        "DriftToolsLoop": ".agentdojo_adapter",
        "PromptingAgent": ".agentdojo_adapter",
        "drift_pipeline": ".agentdojo_adapter",
        "Call": ".calls",
        "CallSyntaxError": ".calls",
        "parse_function_calls": ".calls",
        "DriftDefense": ".defense",
        "Document": ".formats",
        "parse_result": ".formats",
        "Drift": ".drift",
        "DriftConfig": ".drift",
        "DriftSession": ".drift",
        "HeuristicDetector": ".heuristics",
        "InjectionIsolator": ".isolator",
        "Isolation": ".isolator",
        "LearnedDetector": ".learned",
        "LLMUnitDetector": ".llm_units",
        "LLMUnitScorer": ".llm_units",
        "MiniLMEmbedder": ".learned",
        "NearThresholdWarning": ".learned",
        "UnitClassifier": ".learned",
        "TunedDetector": ".learned",
        "LLMDetector": ".isolator",
        "remove_instruction": ".isolator",
        "normalize": ".normalization",
        "ChecklistNode": ".planner",
        "Plan": ".planner",
        "QueryPlanner": ".planner",
        "SecurePlanner": ".planner",
        "oracle_plan": ".planner",
        "parse_checklist": ".planner",
        "parse_trajectory": ".planner",
        "Privilege": ".privileges",
        "PrivilegeAssigner": ".privileges",
        "heuristic_privilege": ".privileges",
        "replay_run": ".replay",
        "ScriptedAgent": ".scripted",
        "Usage": ".usage",
        "Decision": ".validator",
        "DynamicValidator": ".validator",
        "IntentJudge": ".validator",
        "StrictJudge": ".validator",
        "check_node": ".validator",
    },
    optional=(  # the [agentdojo] and [learned] extras'
        "LearnedDetector",
        "MiniLMEmbedder",
        "NearThresholdWarning",
        "UnitClassifier",
        "TunedDetector",
        "AgentDojoOracle",
        "DriftElement",
        "DriftToolsLoop",
        "PromptingAgent",
        "drift_pipeline",
        "ScriptedAgent",
    ),
)
