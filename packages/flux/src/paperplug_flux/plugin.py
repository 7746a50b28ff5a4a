"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "FLUX: Efficient Descriptor-Driven Clustered Federated Learning under Arbitrary Distribution Shifts (NeurIPS 2025)"


@hookimpl
def register_trainers(register):
    register(
        "flux",
        "paperplug_flux.trainer:FLUX",
        summary="clustered federated learning on Flower: descriptors, DBSCAN (no K), per-cluster FedAvg, unseen-client assignment",
        paper=PAPER,
        tags=(
            "federated-learning",
            "flower",
            "clustering",
            "distribution-shift",
            "test-time-adaptation",
        ),
    )
