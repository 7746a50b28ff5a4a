"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "TODO: title (NeurIPS 2025)"


@hookimpl
def register_explainers(register):
    register("adaptgrad", "paperplug_adaptgrad.TODO:Class", summary="TODO", paper=PAPER)
