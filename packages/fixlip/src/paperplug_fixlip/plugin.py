"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = (
    "Explaining Similarity in Vision-Language Encoders with Weighted Banzhaf Interactions "
    "(Baniecki et al., NeurIPS 2025)"
)


@hookimpl
def register_explainers(register):
    register(
        "fixlip",
        "paperplug_fixlip.explainer:FIxLIP",
        summary="second-order weighted Banzhaf interactions (FWBII) between the parts of two "
        "inputs of a dual encoder (image patches x text tokens), cross-modal estimator",
        paper=PAPER,
        tags=("interaction", "banzhaf", "clip", "siglip", "dual-encoder"),
    )
