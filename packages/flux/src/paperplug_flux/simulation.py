"""FLUX under Flower's simulation engine (Ray): the same `FluxStrategy` and ClientApp as the
in-process grid, with every ClientApp in a Ray actor. Needs `pip install "flwr[simulation]"`.

`flwr.simulation.run_simulation` is deprecated upstream in favour of `flwr run` with a Flower
app project; it is the one way to run the engine from Python and is what this wraps.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from flwr.app import ArrayRecord, Context
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import Result
from torch import nn

from paperplug import seeded_torch
from paperplug_flux.client import make_client_app
from paperplug_flux.data import federated_tensors
from paperplug_flux.federation import train_config
from paperplug_flux.strategy import FluxStrategy


def simulate(
    model_fn: Callable[[], nn.Module],
    latent_layer: str,
    n_classes: int,
    train_sets: Sequence[Any],
    test_sets: Sequence[Any] | None = None,
    *,
    rounds: int = 20,
    lr: float = 0.005,
    momentum: float = 0.9,
    batch_size: int = 64,
    local_epochs: int = 2,
    num_cpus_per_client: float = 1.0,
    seed: int = 0,
    **strategy_kw: Any,
) -> tuple[FluxStrategy, Result]:
    """Run FLUX on Flower's Ray simulation engine with one virtual SuperNode per client.
    Returns the fitted strategy (labels_, clustering_, cluster_arrays, history) and Flower's
    Result. Flower's telemetry is switched off unless the caller set FLWR_TELEMETRY_ENABLED."""
    from flwr.simulation import run_simulation

    os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")
    train = federated_tensors(train_sets, "train_sets", n_classes)
    test = federated_tensors(test_sets, "test_sets", n_classes) if test_sets is not None else None
    config = train_config(
        local_epochs=local_epochs, lr=lr, momentum=momentum, batch_size=batch_size
    )
    with seeded_torch(seed):
        initial = ArrayRecord(model_fn().state_dict())
    strategy = FluxStrategy(
        n_classes=n_classes, min_available_nodes=len(train), seed=seed, **strategy_kw
    )
    outcome: dict[str, Result] = {}
    server = ServerApp()

    @server.main()
    def main(grid: Grid, context: Context) -> None:
        outcome["result"] = strategy.start(
            grid=grid, initial_arrays=initial, num_rounds=rounds, train_config=config
        )

    client = make_client_app(model_fn, train, test, latent_layer=latent_layer, n_classes=n_classes)
    run_simulation(
        server_app=server,
        client_app=client,
        num_supernodes=len(train),
        backend_config={"client_resources": {"num_cpus": num_cpus_per_client}},
    )
    if "result" not in outcome:
        raise RuntimeError("the Flower simulation ended without a result (see Flower's log above)")
    return strategy, outcome["result"]
