"""FLUX as a Flower App, for `flwr run` on a deployment (a SuperLink and one SuperNode per
client, each holding its own data) or on Flower's simulation engine: the module-level
`server_app` and `client_app` read everything from Flower's run and node configs.

    write_app("flux-app", model="my_models:make_net", latent_layer="hidden", n_classes=10,
              output_dir="/srv/flux-run")          # the app's pyproject.toml
    flower-supernode --insecure --superlink HOST:9093 --node-config 'data-path="client.npz"'
    flwr run flux-app <superlink-connection>
    FLUX.from_run("/srv/flux-run", make_net, input_shape=(64,))   # serve unseen clients

Run config ([tool.flwr.app.config], overridable with `flwr run --run-config`): `model` (a
"module:callable" building the torch model, importable on every node), `latent-layer`,
`n-classes`, `num-rounds`, `max-warmup-rounds` (0: 80 % of the rounds), `plateau-tol`, `lr`,
`batch-size`, `local-epochs`, `momentum`, `clustering`, `threshold`, `min-count`,
`noise-scale`, `projection-seed`, `seed`, `min-nodes` (nodes every round waits for),
`output-dir` (where the ServerApp saves the run) and `data-dir` (simulation only: partition i
reads `data-dir/client-<i>.npz`). A SuperNode's `data-path` (node config) names its own file:
`save_client_data` writes one (X, y and optionally X_test, y_test).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from flwr.app import ArrayRecord, Context
from flwr.serverapp import Grid, ServerApp
from torch import nn

from paperplug import seeded_torch
from paperplug.checks import check_callable, check_consistent_length, check_scalar, check_type
from paperplug_flux.client import ClientSetup, flux_client_app
from paperplug_flux.data import client_tensors, labels, samples
from paperplug_flux.models import build_model
from paperplug_flux.superlink import toml_value

APP_NAME = "flux-app"
# run config keys and their defaults (the FLUX defaults; `model`, `latent-layer`, `n-classes`
# and `output-dir` have none)
RUN_DEFAULTS: dict[str, Any] = {
    "num-rounds": 20,
    "max-warmup-rounds": 0,
    "plateau-tol": 0.05,
    "lr": 0.005,
    "batch-size": 64,
    "local-epochs": 2,
    "momentum": 0.9,
    "clustering": "calibrated",
    "threshold": 2.5,
    "min-count": 3,
    "noise-scale": 0.0,
    "projection-seed": 1,
    "seed": 0,
    "min-nodes": 2,
    "data-dir": "",
}


def resolve_model(reference: str, name: str = "model") -> Callable[[], nn.Module]:
    """The callable a "module:attribute" reference names (e.g. "paperplug_flux.embedded:make_mlp");
    errors name the argument `name`."""
    check_type(reference, name, str, what='a "module:callable" reference')
    module, _, attribute = reference.partition(":")
    if not module or not attribute:
        raise ValueError(f'{name} must be a "module:callable" reference, got {reference!r}')
    try:
        target: Any = importlib.import_module(module)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{name}={reference!r} cannot be imported: {exc}") from exc
    return check_callable(target, name, what="callable building a torch nn.Module")


def model_reference(model_fn: Callable[[], nn.Module] | str, name: str = "model_fn") -> str:
    """The "module:qualname" reference of a module-level callable (what other processes
    import), or the reference given, checked; errors name the argument `name`."""
    if isinstance(model_fn, str):
        resolve_model(model_fn, name)
        return model_fn
    check_callable(model_fn, name, what="callable returning a torch nn.Module")
    reference = f"{model_fn.__module__}:{model_fn.__qualname__}"
    try:
        same = resolve_model(reference) is model_fn
    except (ValueError, TypeError):
        same = False
    if not same or "<" in reference:
        raise ValueError(
            f"{name} must be importable by name in other processes (a module-level function "
            f"or class), got {reference}; pass a 'module:callable' string instead"
        )
    return reference


def check_path(value: str | os.PathLike[str], name: str, *, folder: bool) -> Path:
    """`value` as a Path, not an existing file where a folder is meant (nor the reverse)."""
    path = Path(check_type(value, name, (str, os.PathLike), what="a path"))
    if folder and path.exists() and not path.is_dir():
        raise ValueError(f"{name} {str(path)!r} is a file, not a folder")
    if not folder and path.is_dir():
        raise ValueError(f"{name} {str(path)!r} is a folder, not a file")
    return path


def save_client_data(
    path: str | Path, X: Any, y: Any, X_test: Any = None, y_test: Any = None
) -> Path:
    """One SuperNode's data file (npz; ".npz" is added to `path` as numpy adds it, and the
    path written is returned): X, y and optionally a held-out X_test, y_test (both or
    neither)."""
    out = check_path(path, "path", folder=False)
    out = out if out.suffix == ".npz" else out.with_name(out.name + ".npz")
    x, yt = samples(X, "X"), labels(y, "y")
    check_consistent_length(X=x, y=yt)
    arrays = {"X": x.numpy(), "y": yt.numpy()}
    if X_test is not None or y_test is not None:
        for name, value in (("X_test", X_test), ("y_test", y_test)):
            if value is None:
                raise ValueError(f"{name} is None: give X_test and y_test together, or neither")
        xt, ytt = samples(X_test, "X_test"), labels(y_test, "y_test")
        if xt.shape[1:] != x.shape[1:]:
            raise ValueError(
                f"X_test must have samples of X's shape {tuple(x.shape[1:])}, got "
                f"{tuple(xt.shape[1:])}"
            )
        check_consistent_length(X_test=xt, y_test=ytt)
        arrays.update(X_test=xt.numpy(), y_test=ytt.numpy())
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **arrays)
    return out


@lru_cache(maxsize=8)
def _node_data(path: str, n_classes: int) -> tuple:
    with np.load(path) as npz:
        train = client_tensors((npz["X"], npz["y"]), path, n_classes)
        test = train
        if "X_test" in npz.files:
            test = client_tensors((npz["X_test"], npz["y_test"]), path, n_classes)
    return train, test


def node_setup(context: Context) -> ClientSetup:
    """What a node serves: its data file (node config `data-path`, or `data-dir` and the
    partition id in a simulation) and the model, latent layer and classes of the run config."""
    run, node = context.run_config, context.node_config
    pid = int(node.get("partition-id", -1))
    if "data-path" in node:
        path = str(node["data-path"])
    elif run.get("data-dir") and pid >= 0:
        path = str(Path(str(run["data-dir"])) / f"client-{pid}.npz")
    else:
        raise ValueError(
            "this SuperNode has no data: start it with --node-config 'data-path=\"client.npz\"'"
        )
    n_classes = int(run["n-classes"])
    train, test = _node_data(path, n_classes)
    model_fn = resolve_model(str(run["model"]))
    return ClientSetup(model_fn, train, test, str(run["latent-layer"]), n_classes, pid)


client_app = flux_client_app(node_setup)  # a plain assignment: `flwr run` looks for it
server_app = ServerApp()


@server_app.main()
def main(grid: Grid, context: Context) -> None:
    """The FLUX server of one run: FluxStrategy over the connected nodes, the run saved to
    `output-dir`."""
    # server-side modules here: every ClientApp task is a process of its own that imports
    # this module, and needs neither the clustering (scikit-learn) nor the strategy
    from paperplug_flux.federation import train_config
    from paperplug_flux.runs import save_run
    from paperplug_flux.strategy import FluxStrategy

    cfg = {**RUN_DEFAULTS, **dict(context.run_config)}
    model_fn = resolve_model(str(cfg["model"]))
    seed = int(cfg["seed"])
    strategy = FluxStrategy(
        n_classes=int(cfg["n-classes"]),
        max_warmup_rounds=int(cfg["max-warmup-rounds"]) or None,
        plateau_tol=float(cfg["plateau-tol"]),
        clustering=str(cfg["clustering"]),
        threshold=float(cfg["threshold"]),
        min_count=int(cfg["min-count"]),
        noise_scale=float(cfg["noise-scale"]),
        projection_seed=int(cfg["projection-seed"]),
        min_available_nodes=int(cfg["min-nodes"]),
        seed=seed,
    )
    config = train_config(
        local_epochs=int(cfg["local-epochs"]),
        lr=float(cfg["lr"]),
        momentum=float(cfg["momentum"]),
        batch_size=int(cfg["batch-size"]),
    )
    with seeded_torch(seed):
        initial = ArrayRecord(model_fn().state_dict())
    strategy.start(
        grid=grid, initial_arrays=initial, num_rounds=int(cfg["num-rounds"]), train_config=config
    )
    save_run(str(cfg["output-dir"]), strategy.run(cfg))


def write_app(
    directory: str | Path,
    *,
    model: str | Callable[[], nn.Module],
    latent_layer: str,
    n_classes: int,
    output_dir: str | Path,
    **run_config: Any,
) -> Path:
    """Write the Flower App project (a pyproject.toml naming `server_app` and `client_app`)
    for `flwr run directory <connection>`; `run_config` sets other keys of RUN_DEFAULTS
    (Python names: `num_rounds=8` is `num-rounds`). Every value is checked here, as FLUX
    checks it (a run that would fail on its nodes fails now): `model` must build a module
    with `latent_layer`."""
    out = check_path(directory, "directory", folder=True)
    reference = model_reference(model, "model")
    build_model(resolve_model(reference), latent_layer)
    n_classes = check_scalar(n_classes, "n_classes", "int", low=2)
    check_path(output_dir, "output_dir", folder=True)
    config = dict(RUN_DEFAULTS)
    for key, value in run_config.items():
        name = key.replace("_", "-")
        if name not in RUN_DEFAULTS:
            raise TypeError(f"write_app got an unexpected run config key {key!r}")
        config[name] = value
    _check_run_config(config, n_classes)
    config.update(
        {
            "model": reference,
            "latent-layer": latent_layer,
            "n-classes": n_classes,
            "output-dir": str(Path(output_dir).absolute()),
        }
    )
    lines = [
        "[build-system]",
        'requires = ["hatchling"]',
        'build-backend = "hatchling.build"',
        "",
        "[project]",
        f'name = "{APP_NAME}"',
        'version = "1.0.0"',
        'description = "FLUX (paperplug-flux) as a Flower App"',
        'license = "MIT"',
        'dependencies = ["paperplug-flux"]',
        "",
        "[tool.flwr.app]",
        'publisher = "paperplug"',
        "",
        "[tool.flwr.app.components]",
        'serverapp = "paperplug_flux.app:server_app"',
        'clientapp = "paperplug_flux.app:client_app"',
        "",
        "[tool.flwr.app.config]",
        *(f"{k} = {toml_value(v)}" for k, v in config.items()),
        "",
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "pyproject.toml").write_text("\n".join(lines), encoding="utf-8")
    return out


def _check_run_config(config: dict[str, Any], n_classes: int) -> None:
    """The run config's values, checked by FLUX's own checks under their Python names."""
    from paperplug_flux.federation import train_config  # server side (see `main`)
    from paperplug_flux.strategy import FluxStrategy, check_nodes, check_rounds

    py = {k.replace("-", "_"): v for k, v in config.items()}
    warmup = check_scalar(py["max_warmup_rounds"], "max_warmup_rounds", "int", low=0) or None
    FluxStrategy(
        n_classes=n_classes,
        max_warmup_rounds=warmup,
        **{k: py[k] for k in ("plateau_tol", "clustering", "threshold", "min_count")},
        **{k: py[k] for k in ("noise_scale", "projection_seed", "seed")},
    )
    check_rounds(py["num_rounds"], warmup, "num_rounds")
    train_config(**{k: py[k] for k in ("local_epochs", "lr", "momentum", "batch_size")})
    check_nodes(py["min_nodes"], "min_nodes")
    check_type(py["data_dir"], "data_dir", (str, os.PathLike), what="a folder path")


def client_files(
    directory: str | Path, train_sets: list, test_sets: list | None = None
) -> list[Path]:
    """`data-dir` for a simulation: client-<i>.npz per client (train and held-out data)."""
    if test_sets is not None:
        check_consistent_length(train_sets=train_sets, test_sets=test_sets)
    return [
        save_client_data(
            Path(directory) / f"client-{i}.npz",
            x,
            y,
            *(test_sets[i] if test_sets is not None else (None, None)),
        )
        for i, (x, y) in enumerate(train_sets)
    ]
