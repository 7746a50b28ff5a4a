"""Embedded default: FIxLIP on the real MiniLM (a sentence pair, exact FWBII beside the
cross-modal estimate) and on a tiny CLIP trained on digit mosaics (pointing game and AID,
second order vs first order). Offline, CPU, a few minutes; prints tables, saves figures."""

from __future__ import annotations

import warnings

import numpy as np

from paperplug.extras import requires_extra
from paperplug.harness import (
    Timer,
    demo_parser,
    fmt_ci,
    progress,
    pyplot,
    save_figure,
    single_thread,
    table,
)
from paperplug_fixlip.embedded import (
    SENTENCES,
    make_mosaics,
    minilm_game,
    mosaic_game,
    retrieval_accuracy,
    train_tiny_clip,
)
from paperplug_fixlip.estimators import (
    approximate,
    approximate_crossmodal,
    exact_fwbii,
    split_passes,
)
from paperplug_fixlip.metrics import insertion_deletion, p_faithfulness, pointing_game
from paperplug_fixlip.plots import plot_interaction_heatmap, plot_top_pairs

PASSES = (128, 256, 512, 1024)


def sentence_pair(
    seed: int, seeds: int = 3
) -> tuple[object, list[list[object]], list[list[object]]]:
    """Exact FWBII of the MiniLM pair, its top pairs, and the estimators' error by passes."""
    game = minilm_game()
    with Timer() as t:
        exact = exact_fwbii(game)
    print(
        f"MiniLM pair: {game.n_a} x {game.n_b} tokens; exact FWBII from {exact.encoder_calls} "
        f"encoder passes in {t.seconds:.1f} s; ν(∅) = {game.empty_value:.3f}"
    )
    names = game.names
    top = [[names[i], names[j], v] for i, j, v in exact.top_pairs(5)]
    rows = []
    for passes in progress(PASSES, "estimates by encoder passes"):
        a, b = split_passes(passes, game.n_a, game.n_b)
        cross, joint = [], []
        for s in range(seed, seed + seeds):
            est = approximate_crossmodal(game, budget_a=a, budget_b=b, random_state=s)
            cross.append(np.mean((est.values - exact.values) ** 2))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # under/ill-determined near 191
                est = approximate(game, passes // 2, random_state=s)
            joint.append(np.mean((est.values - exact.values) ** 2))
        rows.append(
            [
                passes,
                f"{a} + {b}",
                f"{np.mean(cross):.2e}",
                f"{np.mean(joint):.2e}",
                f"{np.mean(joint) / np.mean(cross):.0f}x",
            ]
        )
    faith = p_faithfulness(game, exact, 256, random_state=seed)
    print(
        f"p-faithfulness of the exact index on 256 held-out coalitions: R² = {faith['r2']:.3f}, "
        f"Spearman = {faith['spearman']:.3f}"
    )
    return exact, top, rows


def mosaics(
    seed: int, n_test: int = 30, steps: int = 600
) -> tuple[list[list[object]], object, object]:
    """Train the tiny CLIP, then PGR and AID on held-out mosaics of 2-4 digits."""
    with Timer() as t:
        model, loss = train_tiny_clip(seed, steps=steps)
    held = make_mosaics(200, seed + 1000, "test")
    print(
        f"tiny CLIP trained in {t.seconds:.0f} s (loss {loss:.3f}); held-out top-1 caption "
        f"retrieval among 200 mosaics: {retrieval_accuracy(model, held):.2f}"
    )
    test = make_mosaics(n_test, seed + 2000, "test", min_digits=2)
    pgr2, pgr1, aid2, aid1 = [], [], [], []
    shown = None
    for m in progress(range(n_test), "explaining held-out mosaics"):
        game, patch_regions, token_regions = mosaic_game(model, test, m)
        result = approximate_crossmodal(
            game, budget_a=512, budget_b=2**game.n_b, random_state=seed + m
        )
        pgr = pointing_game(result, patch_regions, token_regions)
        pgr2.append(pgr["pgr_second_order"])
        pgr1.append(pgr["pgr_first_order"])
        aid2.append(insertion_deletion(game, result, order=2)["aid"])
        aid1.append(insertion_deletion(game, result, order=1)["aid"])
        shown = shown or (result, test.images[m, 0])
    rows = [
        [
            "pointing game (PGR)",
            fmt_ci(pgr2),
            fmt_ci(pgr1),
            f"{np.mean(np.array(pgr2) > np.array(pgr1)):.2f}",
        ],
        [
            "insertion AID (MIF - LIF)",
            fmt_ci(aid2),
            fmt_ci(aid1),
            f"{np.mean(np.array(aid2) > np.array(aid1)):.2f}",
        ],
    ]
    return rows, shown[0], shown[1]


def main(argv: list[str] | None = None) -> int:
    args = demo_parser("fixlip", __doc__).parse_args(argv)
    single_thread()
    with requires_extra("paperplug-fixlip", "demo", "the embedded default"):
        import torch

    torch.set_num_threads(1)
    exact, top, rows = sentence_pair(args.seed)
    print(table(top, ["sentence A token", "sentence B token", "FWBII φ_ij"]))
    print(
        table(
            rows, ["encoder passes", "split a + b", "cross-modal MSE", "joint MSE", "joint / cross"]
        )
    )
    mosaic_rows, result, image = mosaics(args.seed)
    print(
        table(
            mosaic_rows,
            [
                "metric (30 held-out mosaics)",
                "second order",
                "first order (WBV)",
                "share 2nd > 1st",
            ],
        )
    )
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    plot_interaction_heatmap(
        exact, axes[0], title=f"MiniLM, exact FWBII:\n'{SENTENCES[0]}' (rows)\nx '{SENTENCES[1]}'"
    )
    plot_top_pairs(result, image, (4, 4), k=4, ax=axes[1])
    save_figure(fig, args.out / "interactions.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
