"""Embedded default: graded query–document pairs from standard-library docstrings (an adequacy
proxy), embedded with the real MiniLM; EAR and its ablations (no expansion, plain MSE) against
calibrated cosine on held-out queries; EAR's scoring latency per pair. The first
run embeds ~1800 texts (a few minutes, cached); then about four minutes on one thread."""

from __future__ import annotations

import numpy as np

from paperplug.extras import requires_extra
from paperplug.harness import Timer, best_of, demo_parser, pyplot, save_figure, single_thread, table
from paperplug_eareranker.embedded import embedded_pairs, split_by_query
from paperplug_eareranker.metrics import report
from paperplug_eareranker.training import EAReranker

SMALL = {
    "d_model": 128,
    "layers": 2,
    "lr": 1e-3,
    "epochs": 40,
    "patience": 6,
}  # demo-sized (paper: 256, 4)
VARIANTS = {
    "EAR (paper: N=8, bin-aware loss)": {},
    "EAR, no expansion (N=1)": {"n_expand": 1},
    "EAR, plain MSE (α=0)": {"alpha": 0.0},
    "EAR + interaction token (ours)": {"interaction": True},
}


def main(argv: list[str] | None = None) -> int:
    args = demo_parser("eareranker", __doc__).parse_args(argv)
    single_thread()
    print("embedding the docstring pairs with MiniLM (cached after the first run) ...", flush=True)
    pairs, E = embedded_pairs(seed=args.seed)
    train, test = split_by_query(pairs, seed=args.seed)
    Q, D, y, g = E[pairs.query], E[pairs.document], pairs.label, pairs.group
    print(
        f"{len(np.unique(g))} queries, {len(y)} pairs; {len(np.unique(g[test]))} held-out queries\n"
    )

    with requires_extra("paperplug-eareranker", "demo", "the embedded default"):
        from sklearn.isotonic import IsotonicRegression

    cosine = (Q * D).sum(1)
    iso = IsotonicRegression(out_of_bounds="clip").fit(cosine[train], y[train])
    rows = [
        ["cosine + isotonic", *report(iso.predict(cosine[test]), y[test], g[test]).values(), 0.0]
    ]
    models = {}
    for name, change in VARIANTS.items():
        print(f"training {name} ...", flush=True)
        with Timer() as t:
            model = EAReranker(seed=args.seed, **{**SMALL, **change}).fit(
                Q[train], D[train], y[train], groups=g[train]
            )
        models[name] = model
        rows.append(
            [name, *report(model.score(Q[test], D[test]), y[test], g[test]).values(), t.seconds]
        )
    header = ["method", "ACC25", "LACC@10", "LACC@25", "bin acc", "NDCG@10", "MRR", "train s"]
    print("\nheld-out queries (labels: the docstring rubric, an adequacy proxy):")
    print(table(rows, header))

    model = models["EAR (paper: N=8, bin-aware loss)"]
    _, seconds = best_of(lambda: model.score(Q[test], D[test]))
    print(f"\nEAR scoring: {seconds / test.sum() * 1e3:.3f} ms per pair (batch of {test.sum()}, embeddings "
          "given: the documents' length never reaches EAR; `make bench` times it beside a cross-encoder)")  # fmt: skip

    fig, ax = pyplot().subplots(figsize=(6, 3.5))
    for name, model in models.items():
        ax.plot(model.history_["val_loss"], label=name)
    ax.set(xlabel="epoch", ylabel="validation loss", title="EAR training (early stopping)")
    ax.legend(fontsize=7)
    save_figure(fig, args.out / "training.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
