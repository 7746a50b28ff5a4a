"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = (
    "DRIFT: Dynamic Rule-Based Defense with Injection Isolation for Securing LLM Agents "
    "(NeurIPS 2025)"
)


@hookimpl
def register_defenses(register):
    register(
        "drift",
        "paperplug_drift.defense:DriftDefense",
        summary="tool stage: planned trajectory and checklist, dynamic validation, injection isolation",
        paper=PAPER,
        tags=("llm-agents", "prompt-injection", "tool", "agentdojo"),
    )
