"""Embedded default: scikit-learn's digits as 64-token sequences of 17 intensity levels, Prime
with ℓ ∈ {1, 2, 3, 5} sub-tokens (ℓ = 1 is MDM) on the same backbone and steps, trained on the
paper's objective: the test NELBO in bits per pixel (a valid bound), idle-step fraction at two
step counts, and how digit-like the samples are."""

from __future__ import annotations

import numpy as np

from paperplug.harness import (
    Timer,
    demo_parser,
    progress,
    pyplot,
    save_figure,
    single_thread,
    table,
)
from paperplug_prime.embedded import ELLS, digit_classifier, digit_tokens, sample_quality
from paperplug_prime.trainer import PrimeMDM


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("prime", __doc__)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args(argv)
    single_thread()
    Xtr, Xte, ytr, _ = digit_tokens(args.seed)
    clf = digit_classifier(Xtr, ytr)
    rows, grids = [], {}
    with Timer() as timer:
        for ell in progress(ELLS, "ℓ"):
            model = PrimeMDM(ell=ell, steps=args.steps, seed=args.seed, progress=False).fit(Xtr)
            bits = model.nelbo(Xte, n_t=64)
            idle = {nfe: model.sample(200, nfe=nfe, seed=args.seed)[1] for nfe in (32, 64)}
            samples, _ = model.sample(200, nfe=64, seed=args.seed + 1)
            confidence, sure = sample_quality(clf, samples)
            grids[ell] = samples[:8]
            rows.append([ell, model.sub_.base, bits, idle[32], idle[64], confidence, sure])
    noise = np.random.default_rng(args.seed).permuted(samples, axis=1)
    print(
        f"digits (64 pixels, 17 levels), {args.steps} steps of batch 128, MLP hidden 256, "
        f"seed {args.seed}; uniform would be {np.log2(17):.2f} bits per pixel"
    )
    print(
        table(
            rows,
            [
                "ℓ",
                "base b",
                "test NELBO bits/pixel",
                "idle @32",
                "idle @64",
                "clf confidence",
                "share ≥ 0.9",
            ],
        )
    )
    print(f"pixel-shuffled samples: classifier confidence {sample_quality(clf, noise)[0]:.3f}")
    print(f"{timer.seconds:.0f} s wall, {timer.cpu_seconds:.0f} s CPU")
    plt = pyplot()
    fig, axes = plt.subplots(len(grids), 8, figsize=(8, 1.1 * len(grids)))
    for r, (ell, samples) in enumerate(grids.items()):
        for c, image in enumerate(samples):
            axes[r, c].imshow(image.reshape(8, 8), cmap="gray_r", vmin=0, vmax=16)
            axes[r, c].set_xticks([]), axes[r, c].set_yticks([])
        axes[r, 0].set_ylabel(f"ℓ={ell}")
    save_figure(fig, f"{args.out}/samples.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
