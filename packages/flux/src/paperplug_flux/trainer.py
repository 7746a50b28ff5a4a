"""`FLUX`: the whole method behind one estimator, run on Flower in this process.

    flux = FLUX(model_fn, "hidden", n_classes=10).fit(train_sets, test_sets)
    flux.labels_, flux.n_clusters_             # clusters found, K never given
    flux.assign(X_unseen); flux.predict(X_unseen)   # test-time adaptation (stage 5)

`fit` builds the FLUX ClientApp and `FluxStrategy`, and runs them on the in-process
`LocalGrid`; the same two objects run under `flwr run` (`app.py`: a deployment or Flower's
simulation engine), and `FLUX.from_run` serves unseen clients from what such a run saved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from flwr.app import ConfigRecord
from torch import nn

from paperplug.checks import (
    argument_errors,
    check_array,
    check_consistent_length,
    check_is_fitted,
    check_scalar,
)
from paperplug_flux.assignment import assign_clients
from paperplug_flux.client import load_model
from paperplug_flux.data import Data, federated_tensors, labels, samples
from paperplug_flux.descriptors import client_descriptor, data_free_projection
from paperplug_flux.federation import run_strategy, train_config
from paperplug_flux.models import accuracy, build_model, model_latents, predict_labels
from paperplug_flux.runs import FluxRun, load_run
from paperplug_flux.strategy import FluxStrategy, check_rounds


class FLUX:
    """Clustered federated learning from client descriptors (Fenoglio et al., NeurIPS 2025).

    Parameters are the paper's defaults where it has them: 20 rounds, 2 local epochs, SGD
    lr 0.005 with momentum 0.9, batch 64; warm-up until the federated accuracy improves by less
    than `plateau_tol` (from round 3) or for at most `max_warmup_rounds` (80 % of the rounds
    when None); projection seed 1 and d_p = n_classes. The server clusters with
    `clustering="calibrated"` (average linkage on noise-calibrated descriptor distances, cut at
    `threshold`) or the paper's `"knee"` (DBSCAN with `min_samples`, eps at the knee of the
    sorted `eps_curve` distances, `min_knee`); see `cluster_clients`.

    `model_fn()` builds the torch model (any nn.Module whose submodule `latent_layer` gives the
    latents); `clusters` (one label per client) replaces the clustering: the oracle. A close
    warm-up or clustering decision warns; `history_` records each round's decision."""

    def __init__(
        self,
        model_fn: Callable[[], nn.Module],
        latent_layer: str,
        n_classes: int,
        *,
        rounds: int = 20,
        max_warmup_rounds: int | None = None,
        plateau_tol: float = 0.05,
        local_epochs: int = 2,
        lr: float = 0.005,
        momentum: float = 0.9,
        batch_size: int = 64,
        clustering: str = "calibrated",
        threshold: float = 2.5,
        min_count: int = 3,
        min_samples: int = 2,
        eps_curve: str = "mst",
        min_knee: float = 0.5,
        min_clients_for_knee: int = 8,
        noise_scale: float = 0.0,
        projection_seed: int = 1,
        clusters: Sequence[int] | None = None,
        seed: int = 0,
    ) -> None:
        self.model_fn = model_fn
        self.latent_layer = latent_layer
        self.n_classes = n_classes
        self.rounds = rounds
        self.max_warmup_rounds = max_warmup_rounds
        self.plateau_tol = plateau_tol
        self.local_epochs = local_epochs
        self.lr = lr
        self.momentum = momentum
        self.batch_size = batch_size
        self.clustering = clustering
        self.threshold = threshold
        self.min_count = min_count
        self.min_samples = min_samples
        self.eps_curve = eps_curve
        self.min_knee = min_knee
        self.min_clients_for_knee = min_clients_for_knee
        self.noise_scale = noise_scale
        self.projection_seed = projection_seed
        self.clusters = clusters
        self.seed = seed

    def _prepare(
        self, train_sets: Sequence[Any], test_sets: Sequence[Any] | None
    ) -> tuple[FluxStrategy, ConfigRecord, list[Data], list[Data] | None, nn.Module]:
        """Every setting and input checked before any round (but `rounds`, which depends on
        the engine's use): the server strategy, the clients' training config, the train and
        test tensors and the initial model (model_fn() under the seed, taking the samples)."""
        n_classes = check_scalar(self.n_classes, "n_classes", "int", low=2)
        check_scalar(self.seed, "seed", "int", low=0)
        config = train_config(
            local_epochs=self.local_epochs,
            lr=self.lr,
            momentum=self.momentum,
            batch_size=self.batch_size,
        )
        strategy = FluxStrategy(
            n_classes=n_classes,
            max_warmup_rounds=self.max_warmup_rounds,
            plateau_tol=self.plateau_tol,
            clustering=self.clustering,
            threshold=self.threshold,
            min_count=self.min_count,
            min_samples=self.min_samples,
            eps_curve=self.eps_curve,
            min_knee=self.min_knee,
            min_clients_for_knee=self.min_clients_for_knee,
            noise_scale=self.noise_scale,
            projection_seed=self.projection_seed,
            clusters=self.clusters,
            seed=self.seed,
        )
        train = federated_tensors(train_sets, "train_sets", n_classes)
        input_shape = tuple(train[0][0].shape[1:])
        test = None
        if test_sets is not None:
            test = federated_tensors(test_sets, "test_sets", n_classes, input_shape=input_shape)
            check_consistent_length(train_sets=train, test_sets=test)
        if self.clusters is not None:
            check_array(self.clusters, "clusters", dtype="int", shape=(len(train),))
        model = build_model(self.model_fn, self.latent_layer, train[0][0][:2], seed=self.seed)
        return strategy, config, train, test, model

    def fit(self, train_sets: Sequence[Any], test_sets: Sequence[Any] | None = None) -> FLUX:
        """Run FLUX over the clients: `train_sets[i]` is client i's (X, y) (arrays, tensors or a
        torch Dataset); `test_sets[i]` its held-out data for federated evaluation (the warm-up
        plateau and `history_`), its train data when None. `rounds` must leave a round after
        the warm-up (`check_rounds`)."""
        strategy, config, train, test, model = self._prepare(train_sets, test_sets)
        rounds = check_rounds(self.rounds, strategy.max_warmup_rounds)
        input_shape = tuple(train[0][0].shape[1:])
        run = run_strategy(
            strategy,
            self.model_fn,
            model,
            train,
            test,
            rounds=rounds,
            config=config,
            latent_layer=self.latent_layer,
            n_classes=strategy.n_classes,
            desc="FLUX rounds",
        )
        self._absorb(strategy.run(), input_shape)
        self.history_ = [
            dict(h, bytes=b)
            for h, b in zip(self.history_, np.diff(run.bytes).tolist(), strict=True)
        ]
        self.bytes_per_round_ = run.bytes_per_round
        return self

    def _absorb(self, run: FluxRun, input_shape: tuple[int, ...]) -> None:
        """The fitted state from a finished run."""
        self.run_ = run
        self.clustering_ = run.clustering
        self.labels_ = run.clustering.labels.copy()
        self.n_clusters_ = run.clustering.n_clusters
        self.eps_ = run.clustering.eps
        self.decision_ = run.clustering.decision
        self.descriptors_ = run.descriptors.copy()
        self.counts_ = run.counts.copy()
        self.clustered_at_ = run.clustered_at
        self.input_shape_ = input_shape
        self.global_model_ = load_model(self.model_fn, run.global_weights)
        self.cluster_models_ = {
            k: load_model(self.model_fn, w) for k, w in run.cluster_weights.items()
        }
        self.history_ = [dict(h) for h in run.history]

    @classmethod
    def from_run(
        cls, directory: str | Path, model_fn: Callable[[], nn.Module], input_shape: Sequence[int]
    ) -> FLUX:
        """A fitted FLUX from the run a Flower App (`flwr run`, `app.py`) saved to `directory`,
        to assign and serve unseen clients; `model_fn` builds the model the run trained and
        `input_shape` is one sample's shape (e.g. (64,))."""
        run = load_run(directory)
        cfg = run.config
        flux = cls(
            model_fn,
            cfg["latent-layer"],
            int(cfg["n-classes"]),
            projection_seed=int(cfg.get("projection-seed", 1)),
        )
        shape = tuple(check_scalar(d, "input_shape", "int", low=1) for d in input_shape)
        flux._absorb(run, shape)
        return flux

    def _samples(self, X: Any) -> Any:
        check_is_fitted(self, "clustering_")
        return samples(X, "X", input_shape=self.input_shape_)

    def describe(self, X: Any) -> np.ndarray:
        """The marginal descriptor [mean(Pz), std(Pz)] of an unlabelled client, under the global
        warm-up model and the shared projection (what an unseen client sends)."""
        x = self._samples(X)
        with argument_errors("X", f"samples of shape {self.input_shape_}"):
            z = model_latents(self.global_model_, self.latent_layer, x)
        projection = data_free_projection(z.shape[1], self.n_classes, seed=self.projection_seed)
        return client_descriptor(z, None, projection, self.n_classes)

    def assign(self, X: Any) -> int:
        """Stage 5: the cluster an unseen, unlabelled client's data X belongs to."""
        return int(assign_clients(self.describe(X), self.clustering_)[0])

    def _cluster(self, X: Any, cluster: int | None) -> int:
        if cluster is None:
            return self.assign(X)
        k = check_scalar(cluster, "cluster", "int", low=0, high=self.n_clusters_ - 1)
        return k

    def predict(self, X: Any, cluster: int | None = None) -> np.ndarray:
        """Labels for one client's X with its cluster's model (assigned from X when `cluster`
        is None)."""
        x = self._samples(X)
        k = self._cluster(x, cluster)
        with argument_errors("X", f"samples of shape {self.input_shape_}"):
            return predict_labels(self.cluster_models_[k], x).numpy()

    def score(self, X: Any, y: Any, cluster: int | None = None) -> float:
        """Accuracy on one client's (X, y) with test-time assignment from X alone."""
        x = self._samples(X)
        yt = labels(y, "y", self.n_classes)
        check_consistent_length(X=x, y=yt)
        k = self._cluster(x, cluster)
        with argument_errors("X", f"samples of shape {self.input_shape_}"):
            return accuracy(self.cluster_models_[k], x, yt)

    def client_accuracy(self, test_sets: Sequence[Any]) -> np.ndarray:
        """Known clients: accuracy of each training client's own cluster model on its test set."""
        check_is_fitted(self, "clustering_")
        test = federated_tensors(
            test_sets, "test_sets", self.n_classes, input_shape=self.input_shape_
        )
        check_consistent_length(test_sets=test, labels_=self.labels_)
        return np.array(
            [
                accuracy(self.cluster_models_[int(k)], x, y)
                for (x, y), k in zip(test, self.labels_, strict=True)
            ]
        )
