"""Embedded default: the construction verified for several (vocabulary, order), then 2-layer
and 1-layer transformers trained on in-context order-1 chains: loss against the Bayes line and
the layer-2 attention map (saved plots). About a minute on one thread."""

from __future__ import annotations

from paperplug.harness import Timer, demo_parser, pyplot, save_figure, single_thread, table
from paperplug_kgram.construction import KGramTransformer, verify
from paperplug_kgram.embedded import CONSTRUCTION_CASES, TRAINING, random_sequences
from paperplug_kgram.training import MarkovICLTrainer


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("kgram", __doc__)
    parser.add_argument("--steps", type=int, default=TRAINING["steps"])
    args = parser.parse_args(argv)
    single_thread()

    rows = []
    for S, k in CONSTRUCTION_CASES:
        with Timer() as t:
            model = KGramTransformer(S, k, max_len=300)
            error = verify(model, random_sequences(S, 4, 300, args.seed))
        rows.append([S, k, model.layout.width, model.mlp_width, f"{error:.1e}", t.seconds])
    print("the two-layer, one-head construction against the conditional k-gram estimator")
    print("(float64, 4 random sequences of 300 tokens each):")
    print(table(rows, ["S", "k", "residual width", "MLP width", "max |error|", "seconds"]))

    runs = {}
    for layers in (2, 1):
        print(
            f"\ntraining a {layers}-layer, one-head transformer on fresh order-1 chains ...",
            flush=True,
        )
        cfg = {**TRAINING, "steps": args.steps}
        with Timer() as t:
            runs[layers] = MarkovICLTrainer(n_layers=layers, seed=args.seed, **cfg).fit()
        runs[layers].seconds = t.seconds
    rows = [
        [f"{layers} layer(s)", run.history_["nll"][-1], run.bayes_nll_, run.history_["gap"][-1],
         run.unigram_nll_, run.history_["matching_mass"][-1], run.seconds]
        for layers, run in runs.items()
    ]  # fmt: skip
    print(
        table(
            rows, ["model", "NLL", "Bayes NLL", "gap", "unigram NLL", "mass on matches", "seconds"]
        )
    )

    fig, (left, right) = pyplot().subplots(1, 2, figsize=(11, 4))
    for layers, run in runs.items():
        left.plot(run.history_["step"], run.history_["nll"], label=f"{layers}-layer transformer")
    left.axhline(runs[2].bayes_nll_, color="k", ls="--", label="Bayes (add-1 k-gram)")
    left.axhline(runs[2].unigram_nll_, color="grey", ls=":", label="in-context unigram")
    left.set(
        xlabel="training step", ylabel="next-token NLL (nats)", title="Markov ICL, S = 3, k = 1"
    )
    left.legend()
    step, maps = runs[2].attention_snapshots_[-1]
    right.imshow(maps[-1][:24, :24], cmap="viridis")
    right.set(
        title=f"layer-2 attention after {step} steps (query × key)", xlabel="key", ylabel="query"
    )
    save_figure(fig, args.out / "markov_icl.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
