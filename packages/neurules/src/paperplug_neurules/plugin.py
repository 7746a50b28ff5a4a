"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "Neural Rule Lists: Learning Discretizations, Rules, and Order in One Go (NeurIPS 2025)"


@hookimpl
def register_trainers(register):
    register(
        "neurules",
        "paperplug_neurules.classifier:NeuRulesClassifier",
        summary="ordered rule list learned end to end by gradient descent (sklearn classifier)",
        paper=PAPER,
        tags=("rule-list", "interpretable", "tabular"),
    )
