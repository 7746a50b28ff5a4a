"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "Unifying Proportional Fairness in Centroid and Non-Centroid Clustering (NeurIPS 2025)"


@hookimpl
def register_solvers(register):
    register(
        "semicentroid",
        "paperplug_semicentroid.solver:SemiCentroidFair",
        summary="proportionally fair semi-centroid clustering (core via Algorithm 3, exact audit)",
        paper=PAPER,
        tags=("clustering", "fairness", "core", "fjr"),
    )
