"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "Unveiling Environmental Sensitivity of Individual Gains in Influence Maximization (CauIM, NeurIPS 2025)"


@hookimpl
def register_solvers(register):
    register(
        "cauim",
        "paperplug_cauim.solver:CausalInfluenceMaximization",
        summary="seed nodes maximising a campaign's causal effect (exposure-dependent ITEs): G-CauIM / A-CauIM",
        paper=PAPER,
        tags=("influence-maximization", "causal-inference", "graphs", "networkx"),
    )
