"""What one FLUX run leaves: the clustering, descriptors, per-round history and the models, in
memory (`FluxRun`, from a `FluxStrategy`) and on disk (`save_run` / `load_run`: what the
ServerApp of `flwr run` writes, so a run on a real federation can serve unseen clients)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from paperplug.checks import check_type
from paperplug_flux.clustering import BlockScaler, Clustering
from paperplug_flux.decisions import Decision

RESULT_FILE = "flux-run.json"
MODELS_FILE = "flux-models.npz"

Weights = dict[str, np.ndarray]


class NoRunError(FileNotFoundError, ValueError):
    """A folder that holds no saved FLUX run (a missing file, and a bad argument)."""


def _folder(directory: str | os.PathLike[str]) -> Path:
    return Path(check_type(directory, "directory", (str, os.PathLike), what="a folder path"))


@dataclass
class FluxRun:
    """A finished run: `clustering` (labels in client order), raw `descriptors`, `counts`
    (samples per label), `history` (one dict per round), the round it clustered at, the
    global warm-up model and one model per cluster (state dicts as numpy arrays), and
    `config`: what the run was started with (JSON values)."""

    clustering: Clustering
    descriptors: np.ndarray
    counts: np.ndarray
    history: list[dict]
    clustered_at: int
    global_weights: Weights
    cluster_weights: dict[int, Weights]
    config: dict[str, Any] = field(default_factory=dict)


def _clustering_dict(c: Clustering) -> dict:
    return {
        "labels": c.labels.tolist(),
        "centroids": c.centroids.tolist(),
        "scaler": {"edges": list(c.scaler.edges), "lo": list(c.scaler.lo), "hi": list(c.scaler.hi)},
        "eps": c.eps,
        "method": c.method,
        "decision": None if c.decision is None else c.decision.to_dict(),
    }


def _clustering_from(d: dict) -> Clustering:
    decision = d["decision"]
    return Clustering(
        labels=np.asarray(d["labels"], dtype=np.int64),
        centroids=np.asarray(d["centroids"], dtype=np.float64),
        scaler=BlockScaler(
            tuple(d["scaler"]["edges"]), tuple(d["scaler"]["lo"]), tuple(d["scaler"]["hi"])
        ),
        eps=d["eps"],
        method=d["method"],
        decision=None
        if decision is None
        else Decision(
            decision["statistic"], decision["value"], decision["threshold"], decision["outcome"]
        ),
    )


def save_run(directory: str | Path, run: FluxRun) -> Path:
    """Write `run` to `directory` (created): flux-run.json and flux-models.npz."""
    out = _folder(directory)
    check_type(run, "run", FluxRun, what="a FluxRun")
    if out.exists() and not out.is_dir():
        raise ValueError(f"directory {str(out)!r} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "clustering": _clustering_dict(run.clustering),
        "descriptors": run.descriptors.tolist(),
        "counts": run.counts.tolist(),
        "history": run.history,
        "clustered_at": run.clustered_at,
        "config": run.config,
    }
    (out / RESULT_FILE).write_text(json.dumps(record, indent=1), encoding="utf-8")
    arrays = {f"global/{k}": v for k, v in run.global_weights.items()}
    for cluster, weights in run.cluster_weights.items():
        arrays.update({f"cluster-{cluster}/{k}": v for k, v in weights.items()})
    np.savez(out / MODELS_FILE, **arrays)
    return out


def load_run(directory: str | Path) -> FluxRun:
    """The run `save_run` wrote to `directory`."""
    path = _folder(directory)
    if not (path / RESULT_FILE).is_file() or not (path / MODELS_FILE).is_file():
        raise NoRunError(
            f"directory {str(path)!r} holds no FLUX run: expected {RESULT_FILE} and {MODELS_FILE}"
        )
    record = json.loads((path / RESULT_FILE).read_text(encoding="utf-8"))
    global_weights: Weights = {}
    cluster_weights: dict[int, Weights] = {}
    with np.load(path / MODELS_FILE) as npz:
        for key in npz.files:
            owner, name = key.split("/", 1)
            if owner == "global":
                global_weights[name] = npz[key]
            else:
                cluster_weights.setdefault(int(owner.split("-")[1]), {})[name] = npz[key]
    return FluxRun(
        clustering=_clustering_from(record["clustering"]),
        descriptors=np.asarray(record["descriptors"], dtype=np.float64),
        counts=np.asarray(record["counts"], dtype=np.int64),
        history=record["history"],
        clustered_at=int(record["clustered_at"]),
        global_weights=global_weights,
        cluster_weights=dict(sorted(cluster_weights.items())),
        config=record["config"],
    )
