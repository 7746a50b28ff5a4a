"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "Representational Difference Explanations (NeurIPS 2025)"


@hookimpl
def register_explainers(register):
    register(
        "rdx",
        "paperplug_rdx.explainer:RDX",
        summary="what one model's representation groups that another's does not: difference-graph clusters, grids, BSR",
        paper=PAPER,
        tags=("representations", "model-comparison", "concepts", "spectral-clustering"),
    )
