"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "On Learning Imbalances in Neurosymbolic Learning (NeurIPS 2025)"


@hookimpl
def register_trainers(register):
    register(
        "nesy",
        "paperplug_nesy.trainer:NeSyImbalanceTrainer",
        summary="classifier from bags labelled only by σ (MAX/SUM/...): marginal estimate, batch LP, LA and CAROT",
        paper=PAPER,
        tags=("neurosymbolic", "weak-supervision", "class-imbalance", "optimal-transport"),
    )
