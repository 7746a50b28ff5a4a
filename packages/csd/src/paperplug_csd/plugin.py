"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = (
    "C-SafeGen: Certified Safe LLM Generation with Claim-Based Streaming Guardrails (NeurIPS 2025)"
)


@hookimpl
def register_defenses(register):
    register(
        "csd",
        "paperplug_csd.defense:CSD",
        summary="decode stage: claim-level rejection sampling with KV-cache rollback, "
        "backtracking and a refusal fallback under a stream guardrail",
        paper=PAPER,
        tags=("llm-safety", "decoding", "streaming", "conformal"),
    )


@hookimpl
def register_solvers(register):
    register(
        "csd",
        "paperplug_csd.certificate:RiskCertifier",
        summary="the risk certificate: Hoeffding-Bentkus / Clopper-Pearson bounds, "
        "tau chosen by Learn-then-Test",
        paper=PAPER,
        tags=("llm-safety", "conformal", "certificate"),
    )
