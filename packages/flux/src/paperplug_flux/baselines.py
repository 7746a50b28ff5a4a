"""The peers of the benchmark, on the same clients, model, rounds and local training as FLUX:
Flower's own FedAvg and FedProx strategies, IFCA with the true K, and the oracle clustering
(FLUX with the true cluster labels in place of stages 2-3).

Every method is scored the same way: known clients by the accuracy of the model each is
served on its own held-out data; unseen, unlabelled clients by the model each would be served
(the global model for FedAvg/FedProx; for IFCA the cluster model of least predictive entropy
on the client's inputs, since IFCA's loss-based choice needs labels).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from flwr.app import ArrayRecord
from flwr.serverapp.strategy import FedAvg, FedProx
from torch import nn

from paperplug import seeded_torch
from paperplug.checks import check_array, check_choice, check_scalar
from paperplug_flux.client import load_model
from paperplug_flux.data import federated_tensors
from paperplug_flux.decisions import Decision
from paperplug_flux.federation import run_strategy
from paperplug_flux.models import accuracy
from paperplug_flux.strategy import IfcaStrategy, check_rounds
from paperplug_flux.trainer import FLUX

METHODS = ("FedAvg", "FedProx", "IFCA", "FLUX", "Oracle")


@dataclass
class MethodResult:
    """One method's scores: mean accuracy over known and over unseen clients, the cluster
    labels it used (None for one global model), payload bytes per round, wall seconds, the
    federated accuracy after every round and FLUX's clustering decision."""

    method: str
    known_accuracy: float
    unseen_accuracy: float
    labels: np.ndarray | None
    bytes_per_round: float
    seconds: float
    accuracy_per_round: list[float]
    decision: Decision | None = None


def _mean_entropy(model: nn.Module, x: torch.Tensor) -> float:
    with torch.no_grad():
        model.eval()
        p = torch.softmax(model(x), dim=1)
        return float(-(p * torch.log(p.clamp_min(1e-12))).sum(1).mean())


def run_method(
    method: str,
    model_fn: Callable[[], nn.Module],
    latent_layer: str,
    n_classes: int,
    train_sets: Sequence[Any],
    test_sets: Sequence[Any],
    unseen_sets: Sequence[Any],
    *,
    true_clusters: Sequence[int] | None = None,
    rounds: int = 20,
    proximal_mu: float = 0.1,
    seed: int = 0,
    **flux_kw: Any,
) -> MethodResult:
    """Run one of METHODS over the clients. `true_clusters` (one label per training client) is
    needed by IFCA (its K) and the oracle; `flux_kw` go to FLUX (and the oracle) and the local
    training keywords (lr, batch_size, local_epochs, momentum) to every method. Every
    argument and keyword is checked first, whichever the method (as FLUX checks them)."""
    method = check_choice(method, "method", METHODS)
    rounds = check_scalar(rounds, "rounds", "int", low=1)
    proximal_mu = check_scalar(proximal_mu, "proximal_mu", "real", low=0)
    if test_sets is None:
        raise TypeError("test_sets must be a list with one held-out (X, y) per training client")
    flux = FLUX(model_fn, latent_layer, n_classes, rounds=rounds, seed=seed, **flux_kw)
    strategy, config, train, test, init = flux._prepare(train_sets, test_sets)
    shape = tuple(train[0][0].shape[1:])
    unseen = federated_tensors(unseen_sets, "unseen_sets", n_classes, input_shape=shape)
    if true_clusters is not None:
        true_clusters = check_array(
            true_clusters, "true_clusters", dtype="int", shape=(len(train),)
        )
        if true_clusters.min() < 0:
            raise ValueError(f"true_clusters must hold labels >= 0, got {true_clusters.min()}")
    elif method in ("IFCA", "Oracle"):
        raise ValueError(
            f"method={method!r} needs true_clusters (IFCA its K, the oracle its labels)"
        )
    if method in ("FLUX", "Oracle"):
        check_rounds(rounds, strategy.max_warmup_rounds)
    start = time.perf_counter()
    if method in ("FLUX", "Oracle"):
        flux.clusters = true_clusters.tolist() if method == "Oracle" else None
        flux.fit(train, test)
        known = float(flux.client_accuracy(test).mean())
        unseen_acc = float(np.mean([flux.score(x, y) for x, y in unseen]))
        return MethodResult(
            method,
            known,
            unseen_acc,
            flux.labels_,
            flux.bytes_per_round_,
            time.perf_counter() - start,
            [h["accuracy"] for h in flux.history_],
            flux.decision_,
        )
    common = dict(
        rounds=rounds,
        config=config,
        latent_layer=latent_layer,
        n_classes=n_classes,
        desc=f"{method} rounds",
    )
    if method == "IFCA":
        k = len(set(true_clusters.tolist()))
        inits = []
        for j in range(k):
            with seeded_torch(seed * 1000 + j):
                inits.append(ArrayRecord(model_fn().state_dict()))
        strategy = IfcaStrategy(inits, seed=seed)
        run = run_strategy(strategy, model_fn, init, train, test, **common)
        models = {j: load_model(model_fn, a) for j, a in strategy.cluster_arrays.items()}
        labels = np.array([strategy.node_cluster[i + 1] for i in range(len(train))])
        known = float(
            np.mean(
                [accuracy(models[int(c)], x, y) for (x, y), c in zip(test, labels, strict=True)]
            )
        )
        unseen_acc = float(
            np.mean(
                [
                    accuracy(min(models.values(), key=lambda m: _mean_entropy(m, x)), x, y)
                    for x, y in unseen
                ]
            )
        )
        return MethodResult(
            method,
            known,
            unseen_acc,
            labels,
            run.bytes_per_round,
            time.perf_counter() - start,
            run.accuracy,
        )
    strategy = FedProx(proximal_mu=proximal_mu) if method == "FedProx" else FedAvg()
    run = run_strategy(strategy, model_fn, init, train, test, **common)
    model = load_model(model_fn, run.arrays)
    known = float(np.mean([accuracy(model, x, y) for x, y in test]))
    unseen_acc = float(np.mean([accuracy(model, x, y) for x, y in unseen]))
    return MethodResult(
        method,
        known,
        unseen_acc,
        None,
        run.bytes_per_round,
        time.perf_counter() - start,
        run.accuracy,
    )
