"""FLUX's public API: one valid call of each callable, for the battery (six planted clients'
descriptors, two groups; a small projection; a two-layer model for the latents)."""

from __future__ import annotations

import numpy as np
import paperplug_flux as m
import torch

from paperplug.testing import Sweep

REASONS = {
    "FLUX": "the Trainer role's contract sweeps it (packages/flux/tests/test_contract.py)",
    "Clustering": "a result type (what cluster_clients returns)",
    "Decision": "a result type (a clustering's or a warm-up's decision)",
    "FederationRun": "a result type (what run_strategy returns)",
    "FluxRun": "a result type (what FLUX keeps after fit; save_run / load_run)",
    "MethodResult": "a result type (what run_method returns)",
    "BlockScaler": "fitted by cluster_clients, kept in its Clustering",
    "Projection": "made by data_free_projection",
}
SEED = {"seed": [-1]}


def sweeps() -> dict[str, Sweep]:
    rng = np.random.default_rng(0)
    proj = m.data_free_projection(8, 2)
    z, y = rng.random((20, 8)), rng.integers(0, 3, 20)
    D = np.stack(
        [
            m.client_descriptor(rng.random((20, 8)) + (i % 2), rng.integers(0, 3, 20), proj, 3)
            for i in range(6)
        ]
    )
    counts = np.array([[7, 7, 6]] * 6)
    clustering = m.cluster_clients(D, 4, counts=counts)
    points = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [5.0, 5.0], [5.1, 5.0], [5.0, 5.1]])
    dist = np.linalg.norm(points[:, None] - points[None], axis=-1)
    weights = [{"w": np.ones(3)}, {"w": np.zeros(3)}]
    model = torch.nn.Sequential()
    model.add_module("body", torch.nn.Linear(4, 3))
    model.add_module("head", torch.nn.Linear(3, 2))
    curve = np.sort(rng.random(8)) ** 2
    return {
        "assign_clients": Sweep(m.assign_clients, (D[:2, :4], clustering)),
        "average_linkage": Sweep(m.average_linkage, (dist, 1.0), bad_params={"threshold": [-1.0]}),
        "block_ratio": Sweep(
            m.block_ratio,
            (D[0, :4].reshape(2, 2), D[1, :4].reshape(2, 2), 20.0, 20.0),
            bad_params={"n_a": [0.0], "n_b": [-1.0], "noise_scale": [-0.1]},
        ),
        "client_descriptor": Sweep(
            m.client_descriptor,
            (z, y, proj, 3),
            bad_params={"n_classes": [1, 2], "noise_scale": [-0.1]},
            reasons={"rng": "a numpy Generator (None: no noise drawn)"},
        ),
        "cluster_clients": Sweep(
            m.cluster_clients,
            (D, 4),
            {"counts": counts},
            bad_params={
                "marginal_size": [0, 17],
                "method": ["kmeans"],
                "threshold": [0.0],
                "min_count": [0],
                "noise_scale": [-0.1],
                "min_samples": [0],
                "eps_curve": ["sorted"],
                "min_knee": [-0.1],
                "min_clients_for_knee": [0],
                **SEED,
            },
        ),
        "cluster_fedavg": Sweep(
            m.cluster_fedavg,
            (weights, [3.0, 1.0], [0, 1]),
            bad_params={"labels": [[0]], "num_examples": [[1.0], [-1.0, 1.0]]},
        ),
        "data_free_projection": Sweep(
            m.data_free_projection,
            (8, 2),
            bad_params={
                "latent_dim": [0],
                "n_components": [0, 9],
                "max_latent": [0.0],
                "n_points": [1],
                **SEED,
            },
        ),
        "dbscan_with_singletons": Sweep(
            m.dbscan_with_singletons,
            (points, 0.5),
            bad_params={"eps": [0.0], "min_samples": [0]},
            width=False,
        ),
        "descriptor_size": Sweep(
            m.descriptor_size,
            (3, 2),
            bad_params={"n_classes": [0], "n_components": [0], "labelled": [1]},
        ),
        "fedavg": Sweep(
            m.fedavg, (weights, [3.0, 1.0]), bad_params={"num_examples": [[1.0], [-1.0, 1.0]]}
        ),
        "knee": Sweep(m.knee, (curve,), width=False),
        "latents": Sweep(
            m.latents,
            (model, "body", torch.rand(5, 4)),
            bad_params={"latent_layer": ["tail"], "batch_size": [0]},
        ),
        "nearest_neighbour_distances": Sweep(
            m.nearest_neighbour_distances,
            (points,),
            bad_params={"min_samples": [0, 7]},
            width=False,
        ),
        "noise_ratios": Sweep(
            m.noise_ratios,
            (D, counts),
            bad_params={"min_count": [0], "noise_scale": [-0.1]},
        ),
        "silhouette_kmeans": Sweep(
            m.silhouette_kmeans,
            (points,),
            bad_params={"min_silhouette": [1.5], **SEED},
            width=False,
        ),
        "spanning_tree_distances": Sweep(m.spanning_tree_distances, (points,), width=False),
        "train_config": Sweep(
            m.train_config,
            kwargs={"local_epochs": 1, "lr": 0.01, "momentum": 0.9, "batch_size": 8},
            bad_params={
                "local_epochs": [0],
                "lr": [0.0],
                "momentum": [-0.1, 1.5],
                "batch_size": [0],
            },
        ),
        "warmup_decision": Sweep(
            m.warmup_decision,
            ([0.5, 0.6, 0.61],),
            {"max_rounds": 5},
            bad_params={"accuracies": [[1.5]], "max_rounds": [0], "tol": [-0.1], "min_rounds": [0]},
        ),
        "warmup_finished": Sweep(
            m.warmup_finished,
            ([0.5, 0.6, 0.61],),
            {"max_rounds": 5},
            bad_params={"accuracies": [[1.5]], "max_rounds": [0], "tol": [-0.1], "min_rounds": [0]},
        ),
        "wasserstein2_diagonal": Sweep(
            m.wasserstein2_diagonal,
            (np.zeros(2), np.ones(2), np.ones(2), np.ones(2)),
            bad_params={"sigma1": [-np.ones(2)]},
        ),
    }
