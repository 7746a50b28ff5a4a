"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "The Price of Opportunity Fairness in Matroid Allocation Problems (NeurIPS 2025)"


@hookimpl
def register_solvers(register):
    register(
        "matroid",
        "paperplug_matroid.solver:OpportunityFairAllocation",
        summary="opportunity-fair allocation under a matroid: price of fairness, fair lottery, integral allocation",
        paper=PAPER,
        tags=("fairness", "matroid", "matching", "allocation"),
    )
