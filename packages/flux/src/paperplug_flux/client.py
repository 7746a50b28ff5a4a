"""The FLUX ClientApp (Flower Message API): local training, federated evaluation and the
descriptor query, one handler each. What a node serves comes from a `setup(context)` function:
`make_client_app` (in-process grid, tests) picks the i-th client's tensors by
`context.node_config["partition-id"]`; the Flower App (`app.py`) loads a node's data from
files named in its node config.

Every handler answers only from the message it got and the client's own data, so the same app
serves FLUX, the oracle clustering, IFCA and Flower's FedAvg/FedProx strategies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from torch import nn

from paperplug import seeded_torch
from paperplug.checks import check_consistent_length, check_scalar
from paperplug_flux.data import federated_tensors
from paperplug_flux.descriptors import client_descriptor, data_free_projection
from paperplug_flux.models import accuracy, build_model, local_train, model_latents

Data = tuple[torch.Tensor, torch.Tensor]


def record_weights(record: ArrayRecord) -> dict[str, np.ndarray]:
    """An ArrayRecord's arrays as a state dict of numpy arrays."""
    return {k: v.numpy() for k, v in record.items()}


def load_model(
    model_fn: Callable[[], nn.Module], weights: ArrayRecord | Mapping[str, np.ndarray]
) -> nn.Module:
    """A fresh model_fn() holding the weights of an ArrayRecord or a numpy state dict (built
    under a fixed seed, so the caller's torch RNG is untouched; the weights are overwritten)."""
    with seeded_torch(0):  # the weights come from the server; keep the caller's RNG untouched
        model = model_fn()
    state = record_weights(weights) if isinstance(weights, ArrayRecord) else weights
    model.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()}, strict=True)
    return model


def _stream(node: ClientSetup, context: Context) -> int:
    """The node's random stream: its partition id, its node id where it has none."""
    return node.partition_id if node.partition_id >= 0 else int(context.node_id)


def _generator(config: ConfigRecord, stream: int) -> torch.Generator:
    seed = (
        int(config.get("seed", 0)) * 1_000_003 + int(config.get("server-round", 0)) * 1_009 + stream
    )
    return torch.Generator().manual_seed(seed)


@dataclass(frozen=True)
class ClientSetup:
    """What one node's handlers need: the model builder, the node's train and test data (its
    train data again when it has no test set), the latent layer, the number of classes and its
    partition id (-1 where the node has none, as on a deployment without one)."""

    model_fn: Callable[[], nn.Module]
    train: Data
    test: Data
    latent_layer: str
    n_classes: int
    partition_id: int = -1


def flux_client_app(setup: Callable[[Context], ClientSetup]) -> ClientApp:
    """The ClientApp whose handlers serve `setup(context)`. Handlers:

    - `train`: local SGD from the model in "arrays" (FedProx's "proximal-mu" honoured); with
      several ArrayRecords (IFCA) it first picks the one of lowest loss on its data.
    - `evaluate`: accuracy of the model in "arrays" on the client's test set.
    - `query.describe`: the client's descriptor under the model in "arrays" (stage 2) and its
      samples per label (the server's noise calibration), as ConfigRecord lists (MetricRecords
      would be averaged by Flower).
    """
    app = ClientApp()

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        node = setup(context)
        x, y = node.train
        config = msg.content.config_records.get("config", ConfigRecord())
        records = msg.content.array_records
        chosen = 0
        if len(records) > 1:  # IFCA: the cluster model of least loss on the local data
            losses = []
            for key in sorted(records, key=lambda k: int(k.split("-")[-1])):
                with torch.no_grad():
                    m = load_model(node.model_fn, records[key])
                    m.eval()
                    losses.append(float(nn.functional.cross_entropy(m(x), y)))
            chosen = int(np.argmin(losses))
            model = load_model(node.model_fn, records[f"cluster-{chosen}"])
        else:
            model = load_model(node.model_fn, next(iter(records.values())))
        loss = local_train(
            model,
            x,
            y,
            epochs=int(config.get("local-epochs", 2)),
            lr=float(config.get("lr", 0.005)),
            momentum=float(config.get("momentum", 0.9)),
            batch_size=int(config.get("batch-size", 64)),
            generator=_generator(config, _stream(node, context)),
            proximal_mu=float(config.get("proximal-mu", 0.0)),
        )
        metrics = MetricRecord({"num-examples": len(x), "train-loss": loss, "cluster": chosen})
        content = RecordDict({"arrays": ArrayRecord(model.state_dict()), "metrics": metrics})
        return Message(content=content, reply_to=msg)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        node = setup(context)
        x, y = node.test
        model = load_model(node.model_fn, next(iter(msg.content.array_records.values())))
        metrics = MetricRecord({"num-examples": len(x), "accuracy": accuracy(model, x, y)})
        return Message(content=RecordDict({"metrics": metrics}), reply_to=msg)

    @app.query("describe")
    def describe(msg: Message, context: Context) -> Message:
        node = setup(context)
        x, y = node.train
        config = msg.content.config_records["config"]
        model = load_model(node.model_fn, next(iter(msg.content.array_records.values())))
        z = model_latents(model, node.latent_layer, x)
        projection = data_free_projection(
            z.shape[1],
            int(config.get("n-components", node.n_classes)),
            max_latent=float(config.get("max-latent", 1.0)),
            seed=int(config.get("projection-seed", 1)),
        )
        noise = float(config.get("noise-scale", 0.0))
        seed = [int(config.get("seed", 0)), _stream(node, context)]
        rng = np.random.default_rng(seed) if noise > 0 else None
        desc = client_descriptor(z, y, projection, node.n_classes, noise_scale=noise, rng=rng)
        counts = np.bincount(y.numpy(), minlength=node.n_classes)
        record = {"values": [float(v) for v in desc], "counts": [int(c) for c in counts]}
        metrics = {"num-examples": len(x), "partition-id": node.partition_id}
        content = RecordDict(
            {"descriptor": ConfigRecord(record), "metrics": MetricRecord(metrics)}  # type: ignore[arg-type]
        )
        return Message(content=content, reply_to=msg)

    return app


def make_client_app(
    model_fn: Callable[[], nn.Module],
    train_sets: Sequence[Any],
    test_sets: Sequence[Any] | None,
    *,
    latent_layer: str,
    n_classes: int,
) -> ClientApp:
    """A ClientApp over per-client (X, y) data (arrays, tensors or torch Datasets, checked and
    copied): node i (`node_config["partition-id"]`) serves `train_sets[i]` and `test_sets[i]`
    (its train set when `test_sets` is None) with `model_fn()`, whose `latent_layer` must
    take the clients' samples."""
    n_classes = check_scalar(n_classes, "n_classes", "int", low=2)
    train = federated_tensors(train_sets, "train_sets", n_classes)
    tests = train
    if test_sets is not None:
        shape = tuple(train[0][0].shape[1:])
        tests = federated_tensors(test_sets, "test_sets", n_classes, input_shape=shape)
        check_consistent_length(train_sets=train, test_sets=tests)
    build_model(model_fn, latent_layer, train[0][0][:2])

    def setup(context: Context) -> ClientSetup:
        pid = int(context.node_config["partition-id"])
        return ClientSetup(model_fn, train[pid], tests[pid], latent_layer, n_classes, pid)

    return flux_client_app(setup)
