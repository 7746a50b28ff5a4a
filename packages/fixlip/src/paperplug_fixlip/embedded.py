"""The embedded default's data and model, shared by demo.py and bench/run.py: offline, CPU."""

from __future__ import annotations


def load_data(seed: int = 0):
    """TODO: the embedded data (a dataset a package ships, or generated with a planted truth)."""
    raise NotImplementedError("TODO")
