"""Compression throughput and peak memory as the layer width grows (d ∈ {256, 1024, 4096}, an
MLP 64-d-d-10, k = 1024): where FactGraSS overtakes LoGra, GraSS and dense JL on this CPU; each
width row runs in a fresh process, so its peak resident memory is its own. Then, beside traker
(TRAK with a dense Rademacher JL) on the embedded default's digits MLP with the same
checkpoints, ground truth, λ grid and test points: LDS at equal k.

make bench PKG=grass [ARGS="--samples 64"]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp

from paperplug.harness import single_thread, table

KINDS = ("gauss", "sjlt", "grass", "logra", "factgrass")
WIDTHS = (256, 1024, 4096)


def one(kind: str, width: int, k: int, samples: int) -> dict:
    import time

    single_thread()
    from paperplug_grass.attributor import GradientFeatures
    from paperplug_grass.embedded import digits, mlp

    from paperplug.harness import peak_memory_mb

    data = digits(0)
    model = mlp(0, width).eval()
    p = sum(q.numel() for q in model.parameters())
    features = GradientFeatures(kind, k, batch_size=16)
    features(model, data.X[:16], data.y[:16])  # draws the projection; not timed
    start = time.process_time()
    features(model, data.X[:samples], data.y[:samples])
    seconds = time.process_time() - start
    return {"p": p, "samples/s": samples / seconds, "peak MiB": peak_memory_mb()}


def feasible(kind: str, width: int, k: int) -> str | None:
    p = 64 * width + width + width * width + width + width * 10 + 10
    if kind == "gauss" and p * k * 4 > 2**30:
        return f"skipped: the dense p × k matrix is {p * k * 4 / 2**30:.0f} GiB"
    return None


PEER_LAMBDAS = (1e-1, 10.0, 1e3)


def _batches(X, y, size=100):
    import torch

    for i in range(0, len(X), size):
        yield torch.as_tensor(X[i : i + size]), torch.as_tensor(y[i : i + size], dtype=torch.long)


def traker_scores(ckpts, data, k: int, lam: float, workdir: str) -> tuple[object, float]:
    """TRAK's scores for validation + test points (n_train, n_val + n_test), and its CPU time."""
    import copy
    import logging
    import time

    import numpy as np
    from trak import TRAKer
    from trak.projectors import BasicProjector, ProjectionType

    model = copy.deepcopy(ckpts[0])
    p = sum(q.numel() for q in model.parameters())
    projector = BasicProjector(
        grad_dim=p,
        proj_dim=k,
        seed=0,
        proj_type=ProjectionType.rademacher,
        device="cpu",
        max_batch_size=32,
    )
    traker = TRAKer(
        model=model,
        task="image_classification",
        train_set_size=len(data.X),
        save_dir=workdir,
        load_from_save_dir=True,  # a fresh folder: nothing to load; False skips creating experiments.json (traker 0.3.2)
        device="cpu",
        proj_dim=k,
        use_half_precision=False,
        projector=projector,
        lambda_reg=lam,
        logging_level=logging.ERROR,
    )
    start = time.process_time()
    for i, ck in enumerate(ckpts):
        traker.load_checkpoint(ck.state_dict(), model_id=i)
        for x, y in _batches(data.X, data.y):
            traker.featurize(batch=(x, y), num_samples=len(x))
    traker.finalize_features()
    Xq = np.concatenate([data.X_val, data.X_test])
    yq = np.concatenate([data.y_val, data.y_test])
    for i, ck in enumerate(ckpts):
        traker.start_scoring_checkpoint(
            exp_name="q", checkpoint=ck.state_dict(), model_id=i, num_targets=len(Xq)
        )
        for x, y in _batches(Xq, yq):
            traker.score(batch=(x, y), num_samples=len(x))
    scores = np.asarray(traker.finalize_scores(exp_name="q"))
    return scores, time.process_time() - start


def lds_beside_traker(ks=(256, 1024), checkpoints: int = 2, models: int = 100) -> list[list]:
    import tempfile

    from paperplug_grass.attributor import InfluenceAttributor
    from paperplug_grass.datamodeling import lds
    from paperplug_grass.embedded import digits, ground_truth, train

    single_thread()
    data = digits(0)
    ckpts = [train(data.X, data.y, seed=s) for s in range(checkpoints)]
    subsets, val, test = ground_truth(data, n_models=models)
    nv = len(data.X_val)
    rows = []
    for k in ks:
        best = None
        for lam in PEER_LAMBDAS:
            with tempfile.TemporaryDirectory() as tmp:
                scores, seconds = traker_scores(ckpts, data, k, lam, f"{tmp}/trak")
            v = lds(scores[:, :nv], subsets, val)[0]
            if best is None or v > best[0]:
                best = (v, lds(scores[:, nv:], subsets, test)[0], lam, seconds)
        rows.append([k, "traker (Rademacher JL)", best[1], best[2], best[3]])
        for kind in ("gauss", "grass", "factgrass"):
            a = InfluenceAttributor(kind, k).cache(ckpts, data.X, data.y)
            lam = a.choose_damping(data.X_val, data.y_val, subsets, val)  # 10^-7 ... 10^2
            rows.append(
                [
                    k,
                    f"paperplug {kind}",
                    lds(a.attribute(data.X_test, data.y_test), subsets, test)[0],
                    lam,
                    a.compression_seconds,
                ]
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--skip-widths", action="store_true")
    args = parser.parse_args()
    rows = []
    ctx = mp.get_context("spawn")
    for width in () if args.skip_widths else WIDTHS:
        for kind in KINDS:
            reason = feasible(kind, width, args.k)
            if reason:
                rows.append([width, kind, None, None, None, reason])
                continue
            with ctx.Pool(1) as pool:
                r = pool.apply(one, (kind, width, args.k, args.samples))
            rows.append([width, kind, r["p"], r["samples/s"], r["peak MiB"], ""])
    print(
        f"per-sample gradient compression to k = {args.k}, {args.samples} samples, batch 16, "
        "one thread, CPU time; each row a fresh process"
    )
    print(
        table(
            rows,
            ["width d", "compressor", "parameters p", "samples/s", "peak MiB", "note"],
            digits=1,
        )
    )

    # after the width rows: a spawned process inherits its parent's peak memory figure
    if not args.skip_peer:
        print(
            "LDS on the digits MLP beside traker: 2 checkpoints, 100 subset models, projection "
            f"seed 0, λ chosen on the validation points (traker from {PEER_LAMBDAS}, each λ a "
            "full run; ours from 10^-7 ... 10^2)"
        )
        print(table(lds_beside_traker(), ["k", "method", "test LDS", "λ", "CPU s (features)"]))


if __name__ == "__main__":
    main()
