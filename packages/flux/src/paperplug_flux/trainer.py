"""`FLUX`: the whole method behind one estimator, run on Flower in this process.

    flux = FLUX(model_fn, "hidden", n_classes=10).fit(train_sets, test_sets)
    flux.labels_, flux.n_clusters_             # clusters found, K never given
    flux.assign(X_unseen); flux.predict(X_unseen)   # test-time adaptation (stage 5)

`fit` builds the FLUX ClientApp and `FluxStrategy`, and runs them on the in-process
`LocalGrid`; the same two objects run under Flower's simulation engine (see the README).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from torch import nn

from paperplug import seeded_torch
from paperplug_flux.assignment import assign_clients
from paperplug_flux.client import load_model
from paperplug_flux.data import client_tensors, federated_tensors
from paperplug_flux.descriptors import client_descriptor, data_free_projection
from paperplug_flux.federation import run_strategy, train_config
from paperplug_flux.models import accuracy, check_latent_layer, latents, predict_labels
from paperplug_flux.strategy import FluxStrategy


class FLUX:
    """Clustered federated learning from client descriptors (Fenoglio et al., NeurIPS 2025).

    Parameters are the paper's defaults where it has them: 20 rounds, 2 local epochs, SGD
    lr 0.005 with momentum 0.9, batch 64; warm-up until the federated accuracy improves by less
    than `plateau_tol` (from round 3) or for at most `max_warmup_rounds` (80 % of the rounds
    when None); DBSCAN with `min_samples=2`, eps at the knee of the sorted spanning-tree
    distances (`eps_curve="nearest"`: the paper's 1-NN curve); projection seed 1 and
    d_p = n_classes.

    `model_fn()` builds the torch model (any nn.Module whose submodule `latent_layer` gives the
    latents); `clusters` (one label per client) replaces the clustering: the oracle."""

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
        self.min_samples = min_samples
        self.eps_curve = eps_curve
        self.min_knee = min_knee
        self.min_clients_for_knee = min_clients_for_knee
        self.noise_scale = noise_scale
        self.projection_seed = projection_seed
        self.clusters = clusters
        self.seed = seed

    def _build(self) -> nn.Module:
        with seeded_torch(self.seed):
            model = self.model_fn()
        if not isinstance(model, nn.Module):
            raise TypeError(f"model_fn must return a torch nn.Module, got {type(model).__name__}")
        check_latent_layer(model, self.latent_layer)
        return model

    def fit(self, train_sets: Sequence[Any], test_sets: Sequence[Any] | None = None) -> FLUX:
        """Run FLUX over the clients: `train_sets[i]` is client i's (X, y) (arrays, tensors or a
        torch Dataset); `test_sets[i]` its held-out data for federated evaluation (the warm-up
        plateau and `history_`), its train data when None."""
        if not callable(self.model_fn):
            raise TypeError("model_fn must be a callable returning a torch nn.Module")
        if not isinstance(self.n_classes, int) or self.n_classes < 2:
            raise ValueError(f"n_classes must be an integer >= 2, got {self.n_classes!r}")
        train = federated_tensors(train_sets, "train_sets", self.n_classes)
        test = None
        if test_sets is not None:
            test = federated_tensors(test_sets, "test_sets", self.n_classes)
            if len(test) != len(train):
                raise ValueError(f"test_sets has {len(test)} clients, train_sets {len(train)}")
        if self.clusters is not None and len(self.clusters) != len(train):
            raise ValueError(f"clusters has {len(self.clusters)} labels for {len(train)} clients")
        config = train_config(
            local_epochs=self.local_epochs,
            lr=self.lr,
            momentum=self.momentum,
            batch_size=self.batch_size,
        )
        model = self._build()
        strategy = FluxStrategy(
            n_classes=self.n_classes,
            max_warmup_rounds=self.max_warmup_rounds,
            plateau_tol=self.plateau_tol,
            min_samples=self.min_samples,
            eps_curve=self.eps_curve,
            min_knee=self.min_knee,
            min_clients_for_knee=self.min_clients_for_knee,
            noise_scale=self.noise_scale,
            projection_seed=self.projection_seed,
            clusters=self.clusters,
            seed=self.seed,
        )
        run = run_strategy(
            strategy,
            self.model_fn,
            model,
            train,
            test,
            rounds=self.rounds,
            config=config,
            latent_layer=self.latent_layer,
            n_classes=self.n_classes,
            desc="FLUX rounds",
        )
        if strategy.clustering_ is None:
            raise RuntimeError(
                f"the warm-up never ended within {self.rounds} rounds; lower max_warmup_rounds or raise rounds"
            )
        self.strategy_ = strategy
        self.clustering_ = strategy.clustering_
        self.labels_ = strategy.labels_.copy()
        self.n_clusters_ = strategy.clustering_.n_clusters
        self.eps_ = strategy.clustering_.eps
        self.descriptors_ = strategy.descriptors_.copy()
        self.clustered_at_ = strategy.clustered_at
        self.global_model_ = load_model(self.model_fn, strategy.global_arrays)
        self.cluster_models_ = {
            k: load_model(self.model_fn, a) for k, a in strategy.cluster_arrays.items()
        }
        self.history_ = [
            dict(h, bytes=b)
            for h, b in zip(strategy.history, np.diff(run.bytes).tolist(), strict=True)
        ]
        self.bytes_per_round_ = run.bytes_per_round
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "clustering_"):
            raise RuntimeError("call fit first")

    def describe(self, X: Any) -> np.ndarray:
        """The marginal descriptor [mean(Pz), std(Pz)] of an unlabelled client, under the global
        warm-up model and the shared projection (what an unseen client sends)."""
        self._check_fitted()
        x, _ = client_tensors(X, "X", labelled=False)
        z = latents(self.global_model_, self.latent_layer, x)
        projection = data_free_projection(z.shape[1], self.n_classes, seed=self.projection_seed)
        return client_descriptor(z, None, projection, self.n_classes)

    def assign(self, X: Any) -> int:
        """Stage 5: the cluster an unseen, unlabelled client's data X belongs to."""
        return int(assign_clients(self.describe(X), self.clustering_)[0])

    def predict(self, X: Any, cluster: int | None = None) -> np.ndarray:
        """Labels for one client's X with its cluster's model (assigned from X when `cluster`
        is None)."""
        self._check_fitted()
        k = self.assign(X) if cluster is None else int(cluster)
        if k not in self.cluster_models_:
            raise ValueError(
                f"cluster must be one of {sorted(self.cluster_models_)}, got {cluster}"
            )
        x, _ = client_tensors(X, "X", labelled=False)
        return predict_labels(self.cluster_models_[k], x).numpy()

    def score(self, X: Any, y: Any, cluster: int | None = None) -> float:
        """Accuracy on one client's (X, y) with test-time assignment from X alone."""
        self._check_fitted()
        x, yt = client_tensors((X, y), "(X, y)", self.n_classes)
        k = self.assign(x) if cluster is None else int(cluster)
        return accuracy(self.cluster_models_[k], x, yt)

    def client_accuracy(self, test_sets: Sequence[Any]) -> np.ndarray:
        """Known clients: accuracy of each training client's own cluster model on its test set."""
        self._check_fitted()
        test = federated_tensors(test_sets, "test_sets", self.n_classes)
        if len(test) != len(self.labels_):
            raise ValueError(
                f"test_sets has {len(test)} clients; FLUX was fitted on {len(self.labels_)}"
            )
        return np.array(
            [
                accuracy(self.cluster_models_[int(k)], x, y)
                for (x, y), k in zip(test, self.labels_, strict=True)
            ]
        )
