"""Running a Flower strategy over per-client data in this process: the ClientApp, the in-process
grid, per-round federated accuracy and bytes, a progress bar. FLUX, the oracle, IFCA and
Flower's FedAvg/FedProx all go through `run_strategy`, so they see the same clients, model,
rounds and local training."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from flwr.app import ArrayRecord, ConfigRecord, MetricRecord
from flwr.serverapp.strategy import Strategy
from torch import nn

from paperplug.checks import check_scalar
from paperplug.harness import progress
from paperplug_flux.client import make_client_app
from paperplug_flux.grid import LocalGrid


@dataclass
class FederationRun:
    """What one run left: the final ArrayRecord, federated accuracy and cumulative bytes per
    round (index 0 = before round 1)."""

    arrays: ArrayRecord
    accuracy: list[float] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)

    @property
    def bytes_per_round(self) -> float:
        return (self.bytes[-1] - self.bytes[0]) / max(1, len(self.bytes) - 1)


def train_config(*, local_epochs: int, lr: float, momentum: float, batch_size: int) -> ConfigRecord:
    """The ConfigRecord every training message carries (the paper's client hyper-parameters)."""
    local_epochs = check_scalar(local_epochs, "local_epochs", "int", low=1)
    batch_size = check_scalar(batch_size, "batch_size", "int", low=1)
    lr = check_scalar(lr, "lr", "real", low=0, inclusive="neither")
    momentum = check_scalar(momentum, "momentum", "real", low=0, high=1, inclusive="left")
    return ConfigRecord(
        {
            "local-epochs": local_epochs,
            "lr": float(lr),
            "momentum": float(momentum),
            "batch-size": batch_size,
        }
    )


def run_strategy(
    strategy: Strategy,
    model_fn: Callable[[], nn.Module],
    initial: nn.Module,
    train_sets: Sequence[tuple[torch.Tensor, torch.Tensor]],
    test_sets: Sequence[tuple[torch.Tensor, torch.Tensor]] | None,
    *,
    rounds: int,
    config: ConfigRecord,
    latent_layer: str,
    n_classes: int,
    desc: str = "rounds",
) -> FederationRun:
    """`strategy.start` on a LocalGrid with one node per client. Flower's log is kept at
    WARNING for the run, and Python's global `random` state (Flower's node sampling draws from
    it) is restored afterwards."""
    rounds = check_scalar(rounds, "rounds", "int", low=1)
    app = make_client_app(
        model_fn, train_sets, test_sets, latent_layer=latent_layer, n_classes=n_classes
    )
    flwr_log = logging.getLogger("flwr")
    level, state = flwr_log.level, random.getstate()
    flwr_log.setLevel(logging.WARNING)
    bar = iter(progress(range(rounds + 1), desc, total=rounds + 1))
    try:
        with LocalGrid(app, len(train_sets)) as grid:
            run = FederationRun(arrays=ArrayRecord(initial.state_dict()))

            def snapshot(server_round: int, _arrays: ArrayRecord) -> MetricRecord | None:
                run.bytes.append(grid.total_bytes)
                next(bar, None)
                return None

            result = strategy.start(
                grid=grid,
                initial_arrays=run.arrays,
                num_rounds=rounds,
                train_config=config,
                evaluate_fn=snapshot,
            )
    finally:
        flwr_log.setLevel(level)
        random.setstate(state)
        for _ in bar:  # close the bar
            pass
    run.arrays = result.arrays or run.arrays
    run.accuracy = [
        float(result.evaluate_metrics_clientapp[r]["accuracy"])
        for r in sorted(result.evaluate_metrics_clientapp)
    ]
    return run
