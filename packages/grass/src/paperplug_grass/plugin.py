"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "GraSS: Scalable Data Attribution with Gradient Sparsification and Sparse Projection (NeurIPS 2025)"


@hookimpl
def register_explainers(register):
    register(
        "grass",
        "paperplug_grass.attributor:InfluenceAttributor",
        summary="data attribution with compressed per-sample gradients: GraSS, FactGraSS, LoGra, SJLT, masks, JL; eFIM influence; LDS",
        paper=PAPER,
        tags=("data-attribution", "influence", "gradient-compression", "sketching"),
    )
