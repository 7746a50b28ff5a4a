"""Running a Flower strategy over per-client data in this process: the ClientApp, the in-process
grid, per-round federated accuracy and bytes, a progress bar. FLUX, the oracle, IFCA and
Flower's FedAvg/FedProx all go through `run_strategy`, so they see the same clients, model,
rounds and local training."""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from flwr.app import ArrayRecord, ConfigRecord, MetricRecord
from flwr.serverapp.strategy import Strategy
from torch import nn

from paperplug.checks import check_scalar, check_type
from paperplug.harness import progress
from paperplug_flux.client import load_model, make_client_app
from paperplug_flux.grid import LocalGrid

# what a client trains with when a config leaves a key out (the paper's defaults)
TRAIN_DEFAULTS = {"local-epochs": 2, "lr": 0.005, "momentum": 0.9, "batch-size": 64}


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


def check_train_config(config: ConfigRecord, name: str = "config") -> ConfigRecord:
    """`config` if it is a ConfigRecord whose local-training keys (TRAIN_DEFAULTS where left
    out) pass `train_config`'s checks; the errors name `name`."""
    check_type(config, name, ConfigRecord, what="a flwr ConfigRecord (see train_config)")
    values = {k.replace("-", "_"): config.get(k, v) for k, v in TRAIN_DEFAULTS.items()}
    try:
        train_config(**values)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from None
    return config


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
    it) is restored afterwards. Everything is checked before the first round: the client
    data and model as `make_client_app` checks them, `initial` must hold model_fn()'s
    parameters, `config` as `check_train_config`."""
    check_type(strategy, "strategy", Strategy, what="a flwr Strategy")
    check_type(initial, "initial", nn.Module, what="a torch nn.Module (the initial model)")
    rounds = check_scalar(rounds, "rounds", "int", low=1)
    check_train_config(config)
    check_type(desc, "desc", str)
    app = make_client_app(
        model_fn, train_sets, test_sets, latent_layer=latent_layer, n_classes=n_classes
    )
    try:
        load_model(model_fn, initial.state_dict())
    except RuntimeError as exc:
        why = " ".join(str(exc).split())[:300]
        raise ValueError(f"initial must hold model_fn()'s parameters: {why}") from exc
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
                train_config=copy.deepcopy(config),  # Flower writes server-round into it
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
