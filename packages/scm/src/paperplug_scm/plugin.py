"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = (
    "From Judgment to Interference: Early Stopping LLM Harmful Outputs via Streaming "
    "Content Monitoring (NeurIPS 2025)"
)


@hookimpl
def register_trainers(register):
    register(
        "scm",
        "paperplug_scm.training:SCMTrainer",
        summary="dual-supervision (token + response + logic) training of a streaming harm monitor",
        paper=PAPER,
        tags=("llm-safety", "moderation", "streaming"),
    )


@hookimpl
def register_defenses(register):
    register(
        "scm",
        "paperplug_scm.streaming:StreamingMonitor.from_pretrained",
        summary="output stage: stops a streamed LLM reply early (KV-cached token scores, delay-k)",
        paper=PAPER,
        tags=("llm-safety", "moderation", "streaming", "output"),
    )
