"""FLUX beside Flower's FedAvg and FedProx strategies, IFCA (true K) and the oracle clustering,
on the same digits clients, model, rounds and local training, in one process, per shift type.
Also FLUX with the paper's 1-NN eps curve, and (--ray) FLUX under Flower's Ray simulation.

make bench PKG=flux                      # 3 seeds
make bench PKG=flux ARGS="--seeds 0 --ray"
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from paperplug_flux.embedded import (
    FLUX_KW,
    LATENT_LAYER,
    N_CLASSES,
    ROUNDS,
    SHIFTS,
    load_clients,
    make_mlp,
)

from paperplug.harness import fmt_ci, peak_memory_mb, single_thread, table

ROWS = ("FedAvg", "FedProx", "IFCA", "FLUX", "FLUX (1-NN eps)", "Oracle")


def run_row(row: str, split, seed: int):
    from paperplug_flux.baselines import run_method

    kw = dict(true_clusters=split.clusters, rounds=ROUNDS, seed=seed, **FLUX_KW)
    if row in ("FedAvg", "FedProx", "IFCA"):
        kw.pop("max_warmup_rounds")
    method = "FLUX" if row.startswith("FLUX") else row
    if row == "FLUX (1-NN eps)":
        kw["eps_curve"] = "nearest"
    return run_method(
        method, make_mlp, LATENT_LAYER, N_CLASSES, split.train, split.test, split.unseen, **kw
    )


def ray_check() -> list[list]:
    """FLUX under Flower's Ray simulation: 3 rounds on the P(X) clients, and a client that
    raises (must fail the run with its error, not hang)."""
    import torch
    from paperplug_flux.simulation import simulate

    split = load_clients("P(X)", 0)
    local = {k: FLUX_KW[k] for k in ("lr", "batch_size", "local_epochs", "momentum")}
    start = time.perf_counter()
    strategy, _ = simulate(
        make_mlp,
        LATENT_LAYER,
        N_CLASSES,
        split.train,
        split.test,
        rounds=3,
        max_warmup_rounds=2,
        **local,
    )
    rows = [
        [
            "Ray, 12 clients x 3 rounds",
            time.perf_counter() - start,
            f"labels {strategy.labels_.tolist()}",
        ]
    ]

    class Boom(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = make_mlp()

        def forward(self, x):
            if self.training:
                raise RuntimeError("boom")
            return self.net(x)

    start = time.perf_counter()
    try:
        simulate(
            Boom,
            "net.latent",
            N_CLASSES,
            split.train[:4],
            split.test[:4],
            rounds=2,
            max_warmup_rounds=1,
            **local,
        )
        outcome = "no error raised"
    except RuntimeError as err:
        outcome = "raised: " + str(err).splitlines()[0][:60]
    rows.append(["Ray, a client raises", time.perf_counter() - start, outcome])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--shifts", nargs="+", default=list(SHIFTS), choices=SHIFTS)
    parser.add_argument(
        "--ray", action="store_true", help="also run FLUX under Flower's Ray simulation"
    )
    args = parser.parse_args()
    single_thread()
    import torch

    torch.set_num_threads(1)
    from sklearn.metrics import adjusted_rand_score

    for shift in args.shifts:
        results = {row: [] for row in ROWS}
        for seed in args.seeds:
            split = load_clients(shift, seed)
            for row in ROWS:
                res = run_row(row, split, seed)
                ari = (
                    adjusted_rand_score(split.clusters, res.labels)
                    if res.labels is not None
                    else float("nan")
                )
                results[row].append((res, ari))
        lines = []
        for row in ROWS:
            rs = results[row]
            lines.append(
                [
                    row,
                    fmt_ci([r.known_accuracy for r, _ in rs]),
                    fmt_ci([r.unseen_accuracy for r, _ in rs]),
                    "-" if np.isnan(rs[0][1]) else fmt_ci([a for _, a in rs]),
                    "-"
                    if rs[0][0].labels is None
                    else "/".join(str(len(set(r.labels.tolist()))) for r, _ in rs),
                    round(np.mean([r.bytes_per_round for r, _ in rs]) / 1024),
                    float(np.mean([r.seconds for r, _ in rs])),
                ]
            )
        header = [
            "method",
            "known acc",
            "unseen acc",
            "ARI",
            "clusters",
            "KiB/round",
            "wall s / run",
        ]
        print(
            f"\n{shift}: 12 clients in 3 clusters + 6 unseen, {ROUNDS} rounds, seeds {args.seeds}"
        )
        print(table(lines, header, digits=1), flush=True)
    if args.ray:
        print("\nFlower simulation engine (Ray)")
        print(table(ray_check(), ["run", "wall s", "outcome"], digits=1))
    print(f"\npeak memory {peak_memory_mb():.0f} MiB")


if __name__ == "__main__":
    main()
