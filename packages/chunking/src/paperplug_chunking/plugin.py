"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "Concept-Guided Interpretability via Neural Chunking (NeurIPS 2025)"


@hookimpl
def register_explainers(register):
    register(
        "chunking",
        "paperplug_chunking.explainer:ChunkExplainer",
        summary="chunks of population activity: DSC dictionaries, PA templates, UCD prototypes, grafting",
        paper=PAPER,
        tags=("representations", "concepts", "hidden-states", "chunking"),
    )
