"""FLUX's public API: one valid call of each callable, for the battery (six planted clients'
descriptors, two groups; a small projection; a two-layer model for the latents; two clients of
six samples over one or two rounds in this process; one simulation of two rounds on Flower's
engine, the slowest call, whose bad variants are all rejected before it starts)."""

from __future__ import annotations

import tempfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import paperplug_flux as m
import torch
from flwr.app import ArrayRecord, ConfigRecord, Message, MessageType, RecordDict
from flwr.serverapp.strategy import FedAvg

from paperplug.testing import Sweep

REASONS = {
    "Clustering": "a result type (what cluster_clients returns)",
    "Decision": "a result type (a clustering's or a warm-up's decision)",
    "FederationRun": "a result type (what run_strategy returns)",
    "FluxRun": "a result type (what FLUX keeps after fit; save_run / load_run)",
    "MethodResult": "a result type (what run_method returns)",
    "Projection": "made by data_free_projection",
}
SEED = {"seed": [-1]}
MLP = "paperplug_flux.embedded:make_mlp"  # importable by name: the Flower App's model
_FOLDER = tempfile.TemporaryDirectory(prefix="flux-sweep-")
SERVER = {
    "n_classes": [1],
    "max_warmup_rounds": [0],
    "plateau_tol": [-0.1],
    "clustering": ["kmeans"],
    "threshold": [0.0],
    "min_count": [1],
    "noise_scale": [-0.1],
    "projection_seed": [-1],
}
LOCAL = {"lr": [0.0], "momentum": [1.0], "batch_size": [0], "local_epochs": [0]}


def _net() -> torch.nn.Module:
    """4 inputs -> 3 latents (the ReLU "latent") -> 2 classes."""
    layers = [
        ("fc", torch.nn.Linear(4, 3)),
        ("latent", torch.nn.ReLU()),
        ("head", torch.nn.Linear(3, 2)),
    ]
    return torch.nn.Sequential(OrderedDict(layers))


def _clients(rng: np.random.Generator, n_features: int, n_classes: int) -> list:
    """Two clients of six samples, every class present."""
    y = np.arange(6) % n_classes
    return [(rng.random((6, n_features)).astype(np.float32), y.copy()) for _ in range(2)]


def _federation(rng: np.random.Generator) -> dict:
    """What the Flower callables need: tiny clients, a ClientApp, a grid, a message, a run."""
    folder = Path(_FOLDER.name)
    clients = _clients(rng, 4, 2)
    tensors = [(torch.as_tensor(x), torch.as_tensor(y)) for x, y in clients]
    app = m.make_client_app(_net, tensors, None, latent_layer="latent", n_classes=2)
    grid = m.LocalGrid(app, 2)
    initial = ArrayRecord(_net().state_dict())
    with grid:  # a Message reads the run it belongs to from the grid
        content = RecordDict({"arrays": initial, "config": ConfigRecord()})
        message = Message(content, dst_node_id=1, message_type=MessageType.EVALUATE, group_id="1")
        stray = Message(content, dst_node_id=9, message_type=MessageType.EVALUATE, group_id="1")
    descriptors = rng.random((2, m.descriptor_size(2, 2)))
    counts = np.array([[3, 3], [3, 3]])
    run = m.FluxRun(
        clustering=m.cluster_clients(descriptors, 4, counts=counts),
        descriptors=descriptors,
        counts=counts,
        history=[{"round": 1, "phase": "warmup", "accuracy": 0.5}],
        clustered_at=2,
        global_weights={"w": np.ones(3)},
        cluster_weights={0: {"w": np.zeros(3)}},
    )
    saved = m.save_run(folder / "saved", run)
    (folder / "empty").mkdir(exist_ok=True)
    (folder / "file").write_text("not a folder")
    return {
        "folder": folder,
        "clients": clients,
        "tensors": tensors,
        "app": app,
        "grid": grid,
        "initial": initial,
        "message": message,
        "stray": stray,
        "run": run,
        "saved": saved,
    }


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
    f = _federation(rng)
    folder, clients, tensors = f["folder"], f["clients"], f["tensors"]
    not_a_folder = [folder / "file"]
    digits = _clients(rng, 64, 10)  # the embedded MLP's input
    flux = m.FLUX(_net, "latent", 2, rounds=2, max_warmup_rounds=1, local_epochs=1).fit(clients)
    unseen = rng.random((6, 4)).astype(np.float32)
    return {
        **_flower_sweeps(f, folder, clients, tensors, not_a_folder, digits),
        "FLUX.describe": Sweep(flux.describe, (unseen,), bad_params={"X": [unseen[:, :3]]}),
        "FLUX.assign": Sweep(flux.assign, (unseen,), bad_params={"X": [unseen[:, :3]]}),
        "FLUX.client_accuracy": Sweep(
            flux.client_accuracy, (clients,), bad_params={"test_sets": [clients[:1]]}
        ),
        "BlockScaler.transform": Sweep(
            clustering.scaler.transform, (D,), bad_params={"descriptors": [D[:, :3]]}
        ),
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


def _flower_sweeps(f, folder, clients, tensors, not_a_folder, digits) -> dict[str, Sweep]:
    """The callables that run Flower (a strategy, a grid, a SuperLink, the Flower App)."""
    flower_run = {"rounds": 2, "max_warmup_rounds": 1, "local_epochs": 1, "batch_size": 8}
    server = {  # FLUX's server settings, each a keyword of simulate
        "plateau_tol": 0.05,
        "clustering": "calibrated",
        "threshold": 2.5,
        "min_count": 3,
        "noise_scale": 0.0,
        "projection_seed": 1,
    }
    return {
        "FluxStrategy": Sweep(
            m.FluxStrategy,
            kwargs={"n_classes": 2, "max_warmup_rounds": 1},
            bad_params={
                **SERVER,
                "min_samples": [1],
                "eps_curve": ["sorted"],
                "min_knee": [1.0, -0.1],
                "min_clients_for_knee": [1],
                "n_components": [0],
                "max_latent": [0.0],
                "clusters": [[-1, 0], [[0, 1]]],
                "min_available_nodes": [0],
                **SEED,
            },
        ),
        "FluxStrategy.start": Sweep(
            m.FluxStrategy(n_classes=2, max_warmup_rounds=1).start,
            (f["grid"], f["initial"], 2),
            bad_params={"num_rounds": [0, 1]},  # one round leaves none to cluster in
            mutates={"grid": "the grid counts the messages and bytes it carries, as Flower's do"},
        ),
        "IfcaStrategy": Sweep(
            m.IfcaStrategy,
            ([f["initial"], f["initial"]],),
            bad_params={"initial_models": [[], [3]], "min_available_nodes": [0], **SEED},
        ),
        "LocalGrid": Sweep(
            m.LocalGrid, (f["app"], 2), bad_params={"num_nodes": [0], "run_id": [-1]}
        ),
        "LocalGrid.send_and_receive": Sweep(
            f["grid"].send_and_receive,
            ([f["message"]],),
            bad_params={"messages": [[3], [f["stray"]]], "timeout": [0.0]},
            mutates={"messages": "a message sent gets its id, as Flower's Grid sets it"},
        ),
        "LocalSuperLink": Sweep(m.LocalSuperLink, bad_params={"startup_timeout": [0.0, -1.0]}),
        "LocalSuperLink.log_tail": Sweep(
            m.LocalSuperLink().log_tail, kwargs={"lines": 5}, bad_params={"lines": [0, -1]}
        ),
        "load_run": Sweep(
            m.load_run,
            (f["saved"],),
            bad_params={"directory": [folder / "missing", folder / "empty", *not_a_folder]},
        ),
        "save_run": Sweep(
            m.save_run, (folder / "run", f["run"]), bad_params={"directory": not_a_folder}
        ),
        "save_client_data": Sweep(
            m.save_client_data,
            (folder / "client.npz", *clients[0], *clients[1]),
            bad_params={"path": [folder], "y": [-clients[0][1]], "y_test": [None]},
        ),
        "make_client_app": Sweep(
            m.make_client_app,
            (_net, clients, clients),
            {"latent_layer": "latent", "n_classes": 2},
            bad_params={"latent_layer": ["tail"], "n_classes": [1], "test_sets": [clients[:1]]},
        ),
        "run_strategy": Sweep(
            m.run_strategy,
            (FedAvg(), _net, _net(), tensors, tensors),
            {
                "rounds": 1,
                "config": m.train_config(local_epochs=1, lr=0.05, momentum=0.9, batch_size=4),
                "latent_layer": "latent",
                "n_classes": 2,
            },
            bad_params={
                "initial": [torch.nn.Linear(4, 2)],
                "rounds": [0],
                "config": [ConfigRecord({"lr": -1.0})],
                "latent_layer": ["tail"],
                "n_classes": [1],
            },
            reasons={"desc": "any label for the progress bar"},
        ),
        "run_method": Sweep(
            m.run_method,
            ("FedAvg", _net, "latent", 2, clients, clients, clients),
            {"rounds": 1, "true_clusters": [0, 1], "lr": 0.05, "batch_size": 4, "threshold": 2.5},
            bad_params={
                "method": ["FedSGD"],
                "latent_layer": ["tail"],
                "n_classes": [1],
                "true_clusters": [[0], [-1, 0]],
                "rounds": [0],
                "proximal_mu": [-0.1],
                "lr": [0.0],
                "batch_size": [0],
                "threshold": [0.0],
                **SEED,
            },
        ),
        "write_app": Sweep(
            m.write_app,
            (folder / "app",),
            {
                "model": MLP,
                "latent_layer": "latent",
                "n_classes": 10,
                "output_dir": folder / "out",
                "num_rounds": 2,
                "max_warmup_rounds": 1,
                "lr": 0.05,
                "clustering": "calibrated",
                "min_nodes": 2,
            },
            bad_params={
                "directory": not_a_folder,
                "model": ["no_such_module:make", "paperplug_flux.embedded:nothing", "make_mlp"],
                "latent_layer": ["tail"],
                "n_classes": [1],
                "num_rounds": [0, 1],
                "max_warmup_rounds": [-1],
                "lr": [0.0],
                "clustering": ["kmeans"],
                "min_nodes": [0],
            },
        ),
        "simulate": Sweep(
            m.simulate,
            (MLP, "latent", 10, digits, digits),
            {**flower_run, **server, "lr": 0.05, "momentum": 0.9, "num_cpus": 1},
            bad_params={
                "model_fn": ["no_such_module:make", "paperplug_flux.embedded:nothing"],
                "latent_layer": ["tail"],
                "n_classes": [1],
                "rounds": [0, 1],
                **{k: v for k, v in SERVER.items() if k != "n_classes"},
                **LOCAL,
                "num_cpus_per_client": [0],
                "num_cpus": [0],
                "output_dir": not_a_folder,
                "timeout": [0.0],
                **SEED,
            },
        ),
    }
