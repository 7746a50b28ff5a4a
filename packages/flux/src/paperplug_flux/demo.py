"""Embedded default: FLUX on scikit-learn digits under each of the four shifts (12 clients in 3
hidden clusters + 6 unseen), beside FedAvg; prints a table (with the clustering's noise ratio
nearest its cut, "close" within 20 % of it) and saves accuracy per round."""

from __future__ import annotations

import numpy as np

from paperplug.harness import demo_parser, progress, pyplot, save_figure, single_thread, table
from paperplug_flux.embedded import (
    FLUX_KW,
    LATENT_LAYER,
    N_CLASSES,
    ROUNDS,
    SHIFTS,
    load_clients,
    make_mlp,
)


def main(argv: list[str] | None = None) -> int:
    args = demo_parser("flux", __doc__).parse_args(argv)
    single_thread()
    from sklearn.metrics import adjusted_rand_score

    from paperplug_flux.baselines import run_method

    rows, curves = [], {}
    for shift in progress(SHIFTS, "shifts"):
        split = load_clients(shift, args.seed)
        data = (split.train, split.test, split.unseen)
        kw = dict(true_clusters=split.clusters, rounds=ROUNDS, seed=args.seed, **FLUX_KW)
        flux = run_method("FLUX", make_mlp, LATENT_LAYER, N_CLASSES, *data, **kw)
        kw.pop("max_warmup_rounds")
        fedavg = run_method("FedAvg", make_mlp, LATENT_LAYER, N_CLASSES, *data, **kw)
        rows.append(
            [
                shift,
                fedavg.known_accuracy,
                flux.known_accuracy,
                fedavg.unseen_accuracy,
                flux.unseen_accuracy,
                f"{len(set(flux.labels.tolist()))} / 3",
                adjusted_rand_score(split.clusters, flux.labels),
                f"{flux.decision.value:.2f}{' (close)' if flux.decision.close else ''}",
                round(flux.bytes_per_round / 1024),
                round(flux.seconds, 1),
            ]
        )
        curves[shift] = (fedavg.accuracy_per_round, flux.accuracy_per_round)
    header = [
        "shift",
        "FedAvg known",
        "FLUX known",
        "FedAvg unseen",
        "FLUX unseen",
        "clusters",
        "ARI",
        "noise ratio",
        "KiB/round",
        "FLUX s",
    ]
    print(table(rows, header))
    plt = pyplot()
    fig, axes = plt.subplots(1, len(SHIFTS), figsize=(4 * len(SHIFTS), 3.2), sharey=True)
    for ax, (shift, (avg, flux)) in zip(np.atleast_1d(axes), curves.items(), strict=True):
        ax.plot(range(1, len(avg) + 1), avg, label="FedAvg (Flower)")
        ax.plot(range(1, len(flux) + 1), flux, label="FLUX")
        ax.set_title(shift)
        ax.set_xlabel("round")
    np.atleast_1d(axes)[0].set_ylabel("federated accuracy (known clients)")
    np.atleast_1d(axes)[0].legend()
    save_figure(fig, args.out / "accuracy_per_round.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
