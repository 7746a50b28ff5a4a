"""FLUX as a Flower Strategy on the Message API, and IFCA (K given) beside it.

`FluxStrategy` runs the paper's server loop: FedAvg warm-up (stage 1) until the federated
accuracy plateaus, one `query.describe` round trip for the descriptors (stage 2), clustering
(stage 3: the nodes also send their samples per label, which the calibrated clustering needs),
then per-cluster FedAvg where every node trains and is evaluated on its own cluster's model
(stage 4). It talks to nodes through any Flower Grid, so the in-process `LocalGrid` and the
Flower App under `flwr run` (`app.py`: Flower's simulation engine, a deployment) run the same
code.

Every node takes part in every round, in node-id order (the official code assumes full
participation; Flower's own sampling draws from Python's global `random`).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from flwr.app import (
    Array,
    ArrayRecord,
    ConfigRecord,
    Message,
    MessageType,
    MetricRecord,
    RecordDict,
)
from flwr.serverapp import Grid
from flwr.serverapp.strategy import FedAvg, Result
from flwr.serverapp.strategy.strategy_utils import aggregate_arrayrecords, aggregate_metricrecords

from paperplug.checks import check_array, check_choice, check_scalar, check_sequence, check_type
from paperplug_flux.aggregation import cluster_fedavg
from paperplug_flux.client import record_weights
from paperplug_flux.clustering import METHODS, Clustering, cluster_clients
from paperplug_flux.descriptors import descriptor_size
from paperplug_flux.grid import LocalGrid
from paperplug_flux.runs import FluxRun
from paperplug_flux.warmup import warmup_decision

WEIGHT_KEY = "num-examples"
PLATEAU_FROM = 3  # the first round whose plateau can end the warm-up (warmup_decision's min_rounds)


def check_rounds(rounds: int, max_warmup_rounds: int | None, name: str = "rounds") -> int:
    """`rounds` if FLUX can cluster within it: the warm-up ends at round
    min(max_warmup_rounds, 3) at the earliest (its cap, or a plateau from round 3; 80 % of the
    rounds when None) and at least one round must follow it."""
    rounds = check_scalar(rounds, name, "int", low=2)
    if max_warmup_rounds is not None and rounds <= min(max_warmup_rounds, PLATEAU_FROM):
        raise ValueError(
            f"{name}={rounds} leaves no round to cluster in: with max_warmup_rounds="
            f"{max_warmup_rounds} the warm-up ends at round {min(max_warmup_rounds, PLATEAU_FROM)} "
            "at the earliest"
        )
    return rounds


def check_nodes(value: int, name: str = "min_available_nodes") -> int:
    """The number of nodes a round waits for: an int >= 1."""
    return check_scalar(value, name, "int", low=1)


def raise_on_errors(replies: Iterable[Message], what: str) -> list[Message]:
    """The replies, or a RuntimeError naming the first node that failed and its error: a
    client that raises fails the run instead of being averaged away or waited for."""
    replies = list(replies)
    for msg in replies:
        if msg.has_error():
            raise RuntimeError(
                f"{what}: node {msg.metadata.src_node_id} failed: {msg.error.reason}"
            )
    return replies


def wait_for_nodes(grid: Grid, count: int, timeout: float = 600.0) -> list[int]:
    """The grid's node ids in order, once at least `count` are connected (a simulation or a
    deployment registers its nodes after the ServerApp starts)."""
    deadline = time.monotonic() + timeout
    while len(nodes := sorted(grid.get_node_ids())) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(nodes)} of {count} nodes connected after {timeout:.0f} s")
        time.sleep(0.1)
    return nodes


def _message(content: RecordDict, kind: str, node: int, server_round: int) -> Message:
    return Message(content=content, message_type=kind, dst_node_id=node, group_id=str(server_round))


def _to_nodes(
    grid: Grid,
    min_nodes: int,
    kind: str,
    server_round: int,
    content_of: Callable[[int], RecordDict],
) -> list[Message]:
    """One message per connected node (every node takes part, in node-id order)."""
    return [_message(content_of(n), kind, n, server_round) for n in wait_for_nodes(grid, min_nodes)]


def _evaluated(replies: Iterable[Message]) -> MetricRecord | None:
    """The example-weighted mean of the evaluate replies' metrics (None without replies)."""
    replies = raise_on_errors(replies, "evaluate")
    return aggregate_metricrecords([m.content for m in replies], WEIGHT_KEY) if replies else None


class FluxStrategy(FedAvg):
    """The FLUX server. Fitted state after `start`: `phase`, `clustering_` (labels per client
    in `node_order`: partition order, node ids where nodes have no partition-id; centroids,
    scaler, the clustering decision), `labels_`, `descriptors_`, `counts_` (samples per label),
    `global_arrays` (the warm-up model the descriptors and unseen clients use),
    `cluster_arrays` and `history` (one dict per round: phase, federated accuracy, number of
    clusters, and the `decision` taken that round: the warm-up's plateau rule, the clustering).

    `clustering` is "calibrated" (default) or the paper's "knee" (`cluster_clients`).

    `clusters` (one label per partition) replaces stages 2-3 with a given clustering: the
    oracle baseline. Each round waits for `min_available_nodes` nodes; every connected node
    takes part."""

    def __init__(
        self,
        *,
        n_classes: int,
        max_warmup_rounds: int | None = None,
        plateau_tol: float = 0.05,
        clustering: str = "calibrated",
        threshold: float = 2.5,
        min_count: int = 3,
        min_samples: int = 2,
        eps_curve: str = "mst",
        min_knee: float = 0.5,
        min_clients_for_knee: int = 8,
        noise_scale: float = 0.0,
        n_components: int | None = None,
        projection_seed: int = 1,
        max_latent: float = 1.0,
        clusters: Sequence[int] | None = None,
        min_available_nodes: int = 2,
        seed: int = 0,
    ) -> None:
        super().__init__(
            min_train_nodes=1,
            min_evaluate_nodes=1,
            min_available_nodes=check_nodes(min_available_nodes),
        )
        self.n_classes = check_scalar(n_classes, "n_classes", "int", low=2)
        self.max_warmup_rounds = check_scalar(
            max_warmup_rounds, "max_warmup_rounds", "int", low=1, allow_none=True
        )
        self.plateau_tol = check_scalar(plateau_tol, "plateau_tol", "real", low=0)
        self.clustering = check_choice(clustering, "clustering", METHODS)
        self.threshold = check_scalar(threshold, "threshold", "real", low=0, inclusive="neither")
        self.min_count = check_scalar(min_count, "min_count", "int", low=2)
        self.min_samples = check_scalar(min_samples, "min_samples", "int", low=2)
        self.eps_curve = check_choice(eps_curve, "eps_curve", ("mst", "nearest"))
        self.min_knee = check_scalar(min_knee, "min_knee", "real", low=0, high=1, inclusive="left")
        self.min_clients_for_knee = check_scalar(
            min_clients_for_knee, "min_clients_for_knee", "int", low=2
        )
        self.noise_scale = check_scalar(noise_scale, "noise_scale", "real", low=0)
        self.n_components = (
            check_scalar(n_components, "n_components", "int", low=1, allow_none=True)
            or self.n_classes
        )
        self.projection_seed = check_scalar(projection_seed, "projection_seed", "int", low=0)
        self.max_latent = check_scalar(max_latent, "max_latent", "real", low=0, inclusive="neither")
        self.oracle = None
        if clusters is not None:
            self.oracle = check_array(clusters, "clusters", dtype="int", ndim=1)
            if self.oracle.min() < 0:
                raise ValueError(f"clusters must hold labels >= 0, got {self.oracle.min()}")
        self.seed = check_scalar(seed, "seed", "int", low=0)
        self.phase = "warmup"
        self.history: list[dict] = []
        self._warmup_acc: list[float] = []
        self._warmup_over = False
        self._num_rounds = 0
        self.global_arrays: ArrayRecord | None = None
        self.cluster_arrays: dict[int, ArrayRecord] = {}
        self.node_cluster: dict[int, int] = {}
        self.node_order: list[int] = []
        self.clustering_: Clustering | None = None
        self.labels_: np.ndarray | None = None
        self.descriptors_: np.ndarray | None = None
        self.counts_: np.ndarray | None = None
        self.clustered_at: int | None = None

    def summary(self) -> None:  # Flower logs a summary at start; ours is the history
        return None

    def run(self, config: dict | None = None) -> FluxRun:
        """The finished run (clustering, descriptors, history, models), to keep or save."""
        if self.clustering_ is None or self.clustered_at is None:
            raise RuntimeError(
                f"the warm-up never ended within {self._num_rounds} rounds; lower "
                "max_warmup_rounds or raise the number of rounds"
            )
        return FluxRun(
            clustering=self.clustering_,
            descriptors=self.descriptors_,
            counts=self.counts_,
            history=list(self.history),
            clustered_at=self.clustered_at,
            global_weights=record_weights(self.global_arrays),
            cluster_weights={k: record_weights(a) for k, a in self.cluster_arrays.items()},
            config=dict(config or {}),
        )

    def start(self, grid: Grid, initial_arrays: ArrayRecord, num_rounds: int = 3, **kw) -> Result:  # type: ignore[override]
        """Flower's `Strategy.start`, its arguments checked first: `num_rounds` must leave a
        round after the warm-up (`check_rounds`). A `LocalGrid` not yet entered is entered for
        the run."""
        check_type(grid, "grid", Grid, what="a flwr Grid")
        check_type(initial_arrays, "initial_arrays", ArrayRecord, what="a flwr ArrayRecord")
        num_rounds = check_rounds(num_rounds, self.max_warmup_rounds, "num_rounds")
        self._num_rounds = num_rounds
        self.global_arrays = initial_arrays
        enter = isinstance(grid, LocalGrid) and not grid.active
        with grid if enter else contextlib.nullcontext():
            return super().start(grid, initial_arrays, num_rounds=num_rounds, **kw)

    # stage 2 + 3: one describe round trip, then the clustering
    def _describe_and_cluster(self, server_round: int, grid: Grid) -> None:
        nodes = wait_for_nodes(grid, self.min_available_nodes)
        config = ConfigRecord(
            {
                "n-components": self.n_components,
                "projection-seed": self.projection_seed,
                "max-latent": self.max_latent,
                "noise-scale": self.noise_scale,
                "seed": self.seed,
            }
        )
        content = RecordDict({"arrays": self.global_arrays, "config": config})
        replies = raise_on_errors(
            grid.send_and_receive(
                [_message(content, f"{MessageType.QUERY}.describe", n, server_round) for n in nodes]
            ),
            "describe",
        )
        by_node = {m.metadata.src_node_id: m.content for m in replies}
        if set(by_node) != set(nodes):
            raise RuntimeError(
                f"describe: replies from {sorted(by_node)}, expected every node {nodes}"
            )
        # partition order where the nodes have one (simulation, LocalGrid), else node-id order
        order = sorted(nodes, key=lambda n: (int(by_node[n]["metrics"]["partition-id"]), n))
        self.node_order = order
        desc = np.array([by_node[n]["descriptor"]["values"] for n in order], dtype=np.float64)
        counts = np.array([by_node[n]["descriptor"]["counts"] for n in order], dtype=np.int64)
        marginal = descriptor_size(self.n_classes, self.n_components, labelled=False)
        if desc.shape[1] != descriptor_size(self.n_classes, self.n_components):
            raise RuntimeError(
                f"descriptors of {desc.shape[1]} floats; expected {descriptor_size(self.n_classes, self.n_components)}"
            )
        if self.oracle is not None:
            if len(self.oracle) != len(order):
                raise ValueError(f"clusters has {len(self.oracle)} labels for {len(order)} clients")
            clustering = Clustering.from_labels(desc, marginal, self.oracle, method="oracle")
        else:
            clustering = cluster_clients(
                desc,
                marginal,
                counts=counts,
                method=self.clustering,
                threshold=self.threshold,
                min_count=self.min_count,
                noise_scale=self.noise_scale,
                min_samples=self.min_samples,
                eps_curve=self.eps_curve,
                min_knee=self.min_knee,
                min_clients_for_knee=self.min_clients_for_knee,
                seed=self.seed,
            )
        self.clustering_, self.labels_, self.descriptors_ = clustering, clustering.labels, desc
        self.counts_ = counts
        self.node_cluster = {n: int(clustering.labels[i]) for i, n in enumerate(order)}
        self.cluster_arrays = {k: self.global_arrays for k in range(clustering.n_clusters)}
        self.phase, self.clustered_at = "clustered", server_round

    def _model_messages(
        self, grid: Grid, kind: str, server_round: int, arrays: ArrayRecord, cfg: ConfigRecord
    ) -> list[Message]:
        """Each node's model (the global one in warm-up, its cluster's after) with `cfg`."""

        def content(node: int) -> RecordDict:
            clustered = self.phase == "clustered"
            model = self.cluster_arrays[self.node_cluster[node]] if clustered else arrays
            return RecordDict({"arrays": model, "config": cfg})

        return _to_nodes(grid, self.min_available_nodes, kind, server_round, content)

    def configure_train(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        if self.phase == "warmup" and self._warmup_over:
            self._describe_and_cluster(server_round, grid)
        cfg = ConfigRecord(dict(config))
        cfg["server-round"], cfg["seed"] = server_round, self.seed
        return self._model_messages(grid, MessageType.TRAIN, server_round, arrays, cfg)

    def aggregate_train(
        self, server_round: int, replies: Iterable[Message]
    ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        replies = sorted(raise_on_errors(replies, "train"), key=lambda m: m.metadata.src_node_id)
        if not replies:
            return None, None
        contents = [m.content for m in replies]
        metrics = aggregate_metricrecords(contents, WEIGHT_KEY)
        if self.phase == "warmup":
            self.global_arrays = aggregate_arrayrecords(contents, WEIGHT_KEY)
            return self.global_arrays, metrics
        updates = cluster_fedavg(
            [{k: a.numpy() for k, a in m.content["arrays"].items()} for m in replies],
            [float(m.content["metrics"][WEIGHT_KEY]) for m in replies],
            [self.node_cluster[m.metadata.src_node_id] for m in replies],
        )
        for k, weights in updates.items():
            self.cluster_arrays[k] = ArrayRecord({name: Array(w) for name, w in weights.items()})
        return (
            None,
            metrics,
        )  # the global warm-up model stays the one unseen clients are described under

    def configure_evaluate(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        cfg = ConfigRecord(dict(config))
        cfg["server-round"] = server_round
        return self._model_messages(grid, MessageType.EVALUATE, server_round, arrays, cfg)

    def aggregate_evaluate(
        self, server_round: int, replies: Iterable[Message]
    ) -> MetricRecord | None:
        metrics = _evaluated(replies)
        if metrics is None:
            return None
        acc = float(metrics["accuracy"])
        row = {"round": server_round, "phase": self.phase, "accuracy": acc}
        if self.phase == "warmup":
            self._warmup_acc.append(acc)
            cap = self.max_warmup_rounds or max(1, math.floor(0.8 * self._num_rounds))
            decision = warmup_decision(self._warmup_acc, max_rounds=cap, tol=self.plateau_tol)
            self._warmup_over = decision.outcome.startswith("stop")
            if decision.outcome.startswith("stop: plateau"):
                decision.warn_if_close("warm-up")
            row["decision"] = decision.to_dict()
        elif server_round == self.clustered_at and self.clustering_.decision is not None:
            row["decision"] = self.clustering_.decision.to_dict()
        row["clusters"] = self.clustering_.n_clusters if self.clustering_ is not None else 1
        self.history.append(row)
        return metrics


class IfcaStrategy(FedAvg):
    """IFCA (Ghosh et al., NeurIPS 2020), K given: every round each node receives all K
    cluster models, trains the one of least loss on its data and the server averages per
    chosen cluster. `node_cluster` holds each node's last choice."""

    def __init__(
        self, initial_models: Sequence[ArrayRecord], *, min_available_nodes: int = 2, seed: int = 0
    ) -> None:
        super().__init__(
            min_train_nodes=1,
            min_evaluate_nodes=1,
            min_available_nodes=check_nodes(min_available_nodes),
        )
        models = check_sequence(
            initial_models, "initial_models", ArrayRecord, what="flwr ArrayRecords, one per cluster"
        )
        self.cluster_arrays = dict(enumerate(models))
        self.node_cluster: dict[int, int] = {}
        self.seed = check_scalar(seed, "seed", "int", low=0)
        self.history: list[dict] = []

    def summary(self) -> None:
        return None

    def configure_train(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        cfg = ConfigRecord(dict(config))
        cfg["server-round"], cfg["seed"] = server_round, self.seed
        records = {f"cluster-{k}": a for k, a in self.cluster_arrays.items()}
        return _to_nodes(
            grid,
            self.min_available_nodes,
            MessageType.TRAIN,
            server_round,
            lambda n: RecordDict({**records, "config": cfg}),
        )

    def aggregate_train(
        self, server_round: int, replies: Iterable[Message]
    ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        replies = sorted(raise_on_errors(replies, "train"), key=lambda m: m.metadata.src_node_id)
        if not replies:
            return None, None
        self.node_cluster = {
            m.metadata.src_node_id: int(m.content["metrics"]["cluster"]) for m in replies
        }
        for k in sorted(self.cluster_arrays):
            group = [m.content for m in replies if self.node_cluster[m.metadata.src_node_id] == k]
            if group:
                self.cluster_arrays[k] = aggregate_arrayrecords(group, WEIGHT_KEY)
        return None, aggregate_metricrecords([m.content for m in replies], WEIGHT_KEY)

    def configure_evaluate(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        cfg = ConfigRecord(dict(config))
        return _to_nodes(
            grid,
            self.min_available_nodes,
            MessageType.EVALUATE,
            server_round,
            lambda n: RecordDict(
                {"arrays": self.cluster_arrays[self.node_cluster[n]], "config": cfg}
            ),
        )

    def aggregate_evaluate(
        self, server_round: int, replies: Iterable[Message]
    ) -> MetricRecord | None:
        metrics = _evaluated(replies)
        if metrics is None:
            return None
        self.history.append({"round": server_round, "accuracy": float(metrics["accuracy"])})
        return metrics
