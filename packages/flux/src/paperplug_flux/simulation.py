"""FLUX on Flower's simulation engine (Ray), the current way: the Flower App of `app.py` run
with `flwr run` on a local SuperLink started in simulation mode, one virtual SuperNode per
client reading its data file. The same ServerApp and ClientApp run on a deployment.

Needs `pip install "flwr[simulation]"` (Ray). Flower's `run_simulation` Python entry point is
deprecated upstream in favour of `flwr run`, which this uses.
"""

from __future__ import annotations

import importlib.util
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from torch import nn

from paperplug.checks import check_scalar
from paperplug.extras import requires_extra
from paperplug_flux.app import check_path, client_files, model_reference, resolve_model, write_app
from paperplug_flux.strategy import check_rounds
from paperplug_flux.superlink import LocalSuperLink
from paperplug_flux.trainer import FLUX


def simulate(
    model_fn: Callable[[], nn.Module] | str,
    latent_layer: str,
    n_classes: int,
    train_sets: Sequence[Any],
    test_sets: Sequence[Any] | None = None,
    *,
    rounds: int = 20,
    lr: float = 0.005,
    momentum: float = 0.9,
    batch_size: int = 64,
    local_epochs: int = 2,
    num_cpus_per_client: int = 1,
    num_cpus: int | None = None,
    seed: int = 0,
    output_dir: str | Path | None = None,
    timeout: float = 900.0,
    **strategy_kw: Any,
) -> FLUX:
    """Run FLUX on Flower's simulation engine, one virtual SuperNode per client, and return the
    fitted FLUX the run saved (in `output_dir`, a temporary folder when None); Ray gives each
    client `num_cpus_per_client` of its `num_cpus` (all when None). `model_fn` must
    be importable by name (a module-level function or class, or a "module:callable" string);
    `strategy_kw` are FLUX's server settings (max_warmup_rounds, plateau_tol, clustering,
    threshold, min_count, noise_scale, projection_seed). A client that raises fails the run:
    RuntimeError with the client's error. Every argument is checked, as `FLUX.fit` checks it,
    before the SuperLink and Ray start (tens of seconds)."""
    with requires_extra("paperplug-flux", "simulation", "Flower's simulation engine (Ray)"):
        if importlib.util.find_spec("ray") is None:
            raise ModuleNotFoundError("No module named 'ray'", name="ray")
    reference = model_reference(model_fn)
    training = {
        "lr": lr,
        "momentum": momentum,
        "batch_size": batch_size,
        "local_epochs": local_epochs,
        "seed": seed,
    }
    flux = FLUX(
        resolve_model(reference), latent_layer, n_classes, rounds=rounds, **training, **strategy_kw
    )
    strategy, _, train, test, _ = flux._prepare(train_sets, test_sets)
    check_rounds(rounds, strategy.max_warmup_rounds)
    num_cpus_per_client = check_scalar(num_cpus_per_client, "num_cpus_per_client", "int", low=1)
    num_cpus = check_scalar(num_cpus, "num_cpus", "int", low=1, allow_none=True)
    timeout = check_scalar(timeout, "timeout", "real", low=0, inclusive="neither")
    if output_dir is not None:
        output_dir = check_path(output_dir, "output_dir", folder=True)
    input_shape = tuple(train[0][0].shape[1:])
    with tempfile.TemporaryDirectory(prefix="flux-sim-") as tmp:
        out = Path(output_dir) if output_dir is not None else Path(tmp) / "run"
        client_files(Path(tmp) / "data", train, test)
        app = write_app(
            Path(tmp) / "app",
            model=reference,
            latent_layer=latent_layer,
            n_classes=n_classes,
            output_dir=out,
            num_rounds=rounds,
            **training,
            min_nodes=len(train),
            data_dir=str(Path(tmp) / "data"),
            **{
                k: (0 if k == "max_warmup_rounds" and v is None else v)
                for k, v in strategy_kw.items()
            },
        )
        federation = {
            "num-supernodes": len(train),
            "client-resources-num-cpus": num_cpus_per_client,
            **({"init-args-num-cpus": num_cpus} if num_cpus is not None else {}),
        }
        with LocalSuperLink(simulation=True) as link:
            link.run_app(app, out, federation_config=federation, timeout=timeout)
        return FLUX.from_run(out, resolve_model(reference), input_shape)
