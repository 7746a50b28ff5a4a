"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "Attractive Metadata Attack: Inducing LLM Agents to Invoke Malicious Tools (NeurIPS 2025)"


@hookimpl
def register_attacks(register):
    register(
        "ama",
        "paperplug_ama.attack:AMAttack",
        summary="optimises attack-tool names and descriptions so an agent's tool selector picks them",
        paper=PAPER,
        tags=("tool-selection", "agents", "black-box", "in-context-optimisation"),
    )
