"""The FLUX ClientApp (Flower Message API): local training, federated evaluation and the
descriptor query, one handler each. Node i serves the i-th client's data, read from
`context.node_config["partition-id"]` as Flower's simulation engine sets it.

Every handler answers only from the message it got and the client's own data, so the same app
serves FLUX, the oracle clustering, IFCA and Flower's FedAvg/FedProx strategies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from torch import nn

from paperplug import seeded_torch
from paperplug_flux.descriptors import client_descriptor, data_free_projection
from paperplug_flux.models import accuracy, latents, local_train

Data = tuple[torch.Tensor, torch.Tensor]


def _arrays(record: ArrayRecord) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in record.items()}


def load_model(model_fn: Callable[[], nn.Module], record: ArrayRecord) -> nn.Module:
    """A fresh model_fn() holding the weights of an ArrayRecord (built under a fixed seed, so
    the caller's torch RNG is untouched; the weights are overwritten anyway)."""
    with seeded_torch(0):  # the weights come from the server; keep the caller's RNG untouched
        model = model_fn()
    model.load_state_dict({k: torch.as_tensor(v) for k, v in _arrays(record).items()}, strict=True)
    return model


def _generator(config: ConfigRecord, pid: int) -> torch.Generator:
    seed = int(config.get("seed", 0)) * 1_000_003 + int(config.get("server-round", 0)) * 1_009 + pid
    return torch.Generator().manual_seed(seed)


def make_client_app(
    model_fn: Callable[[], nn.Module],
    train_sets: Sequence[Data],
    test_sets: Sequence[Data] | None,
    *,
    latent_layer: str,
    n_classes: int,
) -> ClientApp:
    """A ClientApp over per-client (X, y) tensors. Handlers:

    - `train`: local SGD from the model in "arrays" (FedProx's "proximal-mu" honoured); with
      several ArrayRecords (IFCA) it first picks the one of lowest loss on its data.
    - `evaluate`: accuracy of the model in "arrays" on the client's test set (its train set
      when it has none).
    - `query.describe`: the client's descriptor under the model in "arrays" (stage 2), as a
      ConfigRecord list of floats (MetricRecords would be averaged by Flower).
    """
    app = ClientApp()
    tests = list(test_sets) if test_sets is not None else list(train_sets)

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        pid = int(context.node_config["partition-id"])
        x, y = train_sets[pid]
        config = msg.content.config_records.get("config", ConfigRecord())
        records = msg.content.array_records
        chosen = 0
        if len(records) > 1:  # IFCA: the cluster model of least loss on the local data
            losses = []
            for key in sorted(records, key=lambda k: int(k.split("-")[-1])):
                with torch.no_grad():
                    m = load_model(model_fn, records[key])
                    m.eval()
                    losses.append(float(nn.functional.cross_entropy(m(x), y)))
            chosen = int(np.argmin(losses))
            model = load_model(model_fn, records[f"cluster-{chosen}"])
        else:
            model = load_model(model_fn, next(iter(records.values())))
        loss = local_train(
            model,
            x,
            y,
            epochs=int(config.get("local-epochs", 2)),
            lr=float(config.get("lr", 0.005)),
            momentum=float(config.get("momentum", 0.9)),
            batch_size=int(config.get("batch-size", 64)),
            generator=_generator(config, pid),
            proximal_mu=float(config.get("proximal-mu", 0.0)),
        )
        metrics = MetricRecord({"num-examples": len(x), "train-loss": loss, "cluster": chosen})
        content = RecordDict({"arrays": ArrayRecord(model.state_dict()), "metrics": metrics})
        return Message(content=content, reply_to=msg)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        pid = int(context.node_config["partition-id"])
        x, y = tests[pid]
        model = load_model(model_fn, next(iter(msg.content.array_records.values())))
        metrics = MetricRecord({"num-examples": len(x), "accuracy": accuracy(model, x, y)})
        return Message(content=RecordDict({"metrics": metrics}), reply_to=msg)

    @app.query("describe")
    def describe(msg: Message, context: Context) -> Message:
        pid = int(context.node_config["partition-id"])
        x, y = train_sets[pid]
        config = msg.content.config_records["config"]
        model = load_model(model_fn, next(iter(msg.content.array_records.values())))
        z = latents(model, latent_layer, x)
        projection = data_free_projection(
            z.shape[1],
            int(config.get("n-components", n_classes)),
            max_latent=float(config.get("max-latent", 1.0)),
            seed=int(config.get("projection-seed", 1)),
        )
        noise = float(config.get("noise-scale", 0.0))
        rng = np.random.default_rng([int(config.get("seed", 0)), pid]) if noise > 0 else None
        desc = client_descriptor(z, y, projection, n_classes, noise_scale=noise, rng=rng)
        content = RecordDict(
            {
                "descriptor": ConfigRecord({"values": [float(v) for v in desc]}),
                "metrics": MetricRecord({"num-examples": len(x), "partition-id": pid}),
            }
        )
        return Message(content=content, reply_to=msg)

    return app
