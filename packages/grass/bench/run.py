"""The benchmark beside traker (TRAK, dense Rademacher JL) and dattri (LoGra, FactGraSS via
`dattri_adapter`): (1) compression throughput and peak memory as the layer width grows
(d ∈ {256, 1024, 4096}, an MLP 64-d-d-10, k = 1024), with the model pass alone as the floor of
every factored method; (2) throughput and peak memory of one attribution at equal k on the
embedded default's digits MLP; (3) LDS at equal k over 5 projection seeds with the same
checkpoints, ground truth, λ grid and test points. Every row of (1) and (2) runs in a fresh
process started before the parent imports torch, so its peak resident memory is its own.
`--throughput` runs only (4), issue 35's measurement: our FactGraSS and dattri's (and the
model pass alone) alternating in one process per width d ∈ {1024, 2048, 4096}, then each
method's peak memory in a fresh process, traker's at equal k beside them. `--conv` runs only
the cost of a conv net's factors, unfolded in full or reduced in the pass.

make bench PKG=grass [ARGS="--skip-widths --skip-memory --peers ours --seeds 5"]
make bench PKG=grass ARGS="--throughput"
make bench PKG=grass ARGS="--conv"
"""

from __future__ import annotations

import argparse
import multiprocessing as mp

from paperplug.harness import fmt_ci, single_thread, table

KINDS = (
    "gauss",
    "sjlt",
    "grass",
    "logra",
    "factgrass",
    "dattri logra",
    "dattri factgrass",
    "factors only",
)
WIDTHS = (256, 1024, 4096)
SEEDS = (0, 1, 2, 3, 4)


def one(kind: str, width: int, k: int, samples: int) -> dict:
    import time

    import torch

    single_thread()
    from paperplug_grass.attributor import GradientFeatures
    from paperplug_grass.embedded import digits, mlp

    from paperplug.harness import peak_memory_mb

    data = digits(0)
    model = mlp(0, width).eval()
    p = sum(q.numel() for q in model.parameters())
    if kind == "factors only":  # the model pass every factored compressor needs: its floor
        from paperplug_grass.gradients import layer_factors

        X, y = torch.as_tensor(data.X[:samples]), torch.as_tensor(data.y[:samples])
        start = time.process_time()
        for i in range(0, samples, 16):
            layer_factors(model, X[i : i + 16], y[i : i + 16])
        seconds = time.process_time() - start
        return {"p": p, "samples/s": samples / seconds, "peak MiB": peak_memory_mb()}
    if kind.startswith("dattri "):
        import dattri_adapter

        seconds = dattri_adapter.compression_seconds(
            kind.split()[1], model, data.X[:samples], data.y[:samples], k
        )
        return {"p": p, "samples/s": samples / seconds, "peak MiB": peak_memory_mb()}
    features = GradientFeatures(kind, k, batch_size=16)
    features(model, data.X[:16], data.y[:16])  # draws the projection; not timed
    start = time.process_time()
    features(model, data.X[:samples], data.y[:samples])
    seconds = time.process_time() - start
    return {"p": p, "samples/s": samples / seconds, "peak MiB": peak_memory_mb()}


def memory_row(method: str, k: int) -> dict:
    """One attribution at k on the embedded default's MLP in a fresh process: one checkpoint
    trained here, features of the 1000 training points (timed: compression throughput), then
    scores of the 200 validation + test points at one λ; the process's peak resident memory."""
    import tempfile
    import time

    import numpy as np

    single_thread()
    from paperplug_grass.attributor import GradientFeatures, InfluenceAttributor
    from paperplug_grass.embedded import digits, train

    from paperplug.harness import peak_memory_mb

    data = digits(0)
    ck = train(data.X, data.y, seed=0)
    Xq = np.concatenate([data.X_val, data.X_test])
    yq = np.concatenate([data.y_val, data.y_test])
    n = len(data.X)
    cpu = time.process_time()
    if method == "traker":
        with tempfile.TemporaryDirectory() as tmp:
            feat_seconds = traker_scores([ck], data, k, 10.0, f"{tmp}/trak")[2]
    elif method.startswith("dattri "):
        import dattri_adapter

        kind = method.split()[1]
        feat_seconds = dattri_adapter.compression_seconds(kind, ck, data.X, data.y, k, batch=100)
        dattri_adapter.scores_per_damping(kind, [ck], data, k, (1e-3,))
    else:
        kind = method.split()[1]
        features = GradientFeatures(kind, k)
        features(ck, data.X[:16], data.y[:16])  # draws the projection; not timed
        start = time.process_time()
        features(ck, data.X, data.y)
        feat_seconds = time.process_time() - start
        InfluenceAttributor(kind, k, damping=1e-3).cache(ck, data.X, data.y).attribute(Xq, yq)
    return {
        "samples/s": n / feat_seconds,
        "CPU s": time.process_time() - cpu,
        "peak MiB": peak_memory_mb(),
    }


def feasible(kind: str, width: int, k: int) -> str | None:
    p = 64 * width + width + width * width + width + width * 10 + 10
    if kind == "gauss" and p * k * 4 > 2**30:
        return f"skipped: the dense p × k matrix is {p * k * 4 / 2**30:.0f} GiB"
    return None


THROUGHPUT_WIDTHS = (1024, 2048, 4096)
THROUGHPUT_METHODS = ("paperplug factgrass", "dattri factgrass", "factors only")
TRAKER_WIDTHS = (1024,)  # 0.7 samples/s at 1024 (p = 1.1M); p grows 4× per doubling of d


def _timer(method: str, model, X, y, k: int, batch: int):
    """A function returning the CPU seconds of one pass of `method` over (X, y) in batches of
    `batch`, after an untimed warm-up batch (draws the projections, compiles dattri's
    compressor). dattri monkey-patches the linear layers' forward: it gets its own copy."""
    import copy
    import time

    import torch
    from paperplug_grass.attributor import GradientFeatures
    from paperplug_grass.gradients import layer_factors

    if method == "dattri factgrass":
        import dattri_adapter

        return dattri_adapter.compression_timer("factgrass", copy.deepcopy(model), X, y, k, batch)
    if method == "factors only":  # the model pass every factored compressor needs: its floor
        Xt, yt = torch.as_tensor(X), torch.as_tensor(y)

        def run() -> float:
            start = time.process_time()
            for i in range(0, len(Xt), batch):
                layer_factors(model, Xt[i : i + batch], yt[i : i + batch])
            return time.process_time() - start

        return run
    features = GradientFeatures("factgrass", k, batch_size=batch)
    features(model, X[:batch], y[:batch])  # draws the projection

    def run() -> float:
        start = time.process_time()
        features(model, X, y)
        return time.process_time() - start

    return run


def _setup(width: int, samples: int):
    import os

    os.environ["TQDM_DISABLE"] = "1"  # dattri's progress bars
    single_thread()
    from paperplug_grass.embedded import digits, mlp

    data = digits(0)
    model = mlp(0, width).eval()
    return model, data.X[:samples], data.y[:samples]


def throughput_rates(width: int, k: int, samples: int, batches: tuple, repeats: int) -> dict:
    """In one process, so that every method meets the same load on the shared machine: the
    methods' passes alternate, `repeats` rounds; {(method, batch): (best, median) samples/s}."""
    import statistics

    model, X, y = _setup(width, samples)
    out = {}
    for batch in batches:
        timers = {m: _timer(m, model, X, y, k, batch) for m in THROUGHPUT_METHODS}
        times: dict = {m: [] for m in timers}
        for _ in range(repeats):
            for method, run in timers.items():
                times[method].append(run())
        for method, ts in times.items():
            out[method, batch] = (samples / min(ts), samples / statistics.median(ts))
    return out


def memory_of(method: str, width: int, k: int, samples: int, batch: int) -> dict:
    """In a fresh process: the peak resident memory of one pass of `method` (warm-up included),
    and for traker its samples/s (one pass: TRAK's per-sample gradients, dense Rademacher JL)."""
    import tempfile

    from paperplug.harness import peak_memory_mb

    model, X, y = _setup(width, samples)
    out = {"p": sum(q.numel() for q in model.parameters())}
    if method == "traker":
        with tempfile.TemporaryDirectory() as tmp:
            out["samples/s"] = samples / traker_featurize_seconds(model, X, y, k, batch, tmp)
    else:
        _timer(method, model, X, y, k, batch)()
    out["peak MiB"] = peak_memory_mb()
    return out


def traker_featurize_seconds(model, X, y, k: int, batch: int, workdir: str) -> float:
    """CPU seconds of traker featurizing (X, y) in batches of `batch` (one pass, CPU)."""
    import logging
    import time

    from trak import TRAKer
    from trak.projectors import BasicProjector, ProjectionType

    p = sum(q.numel() for q in model.parameters())
    projector = BasicProjector(grad_dim=p, proj_dim=k, seed=0, device="cpu", max_batch_size=32,
                               proj_type=ProjectionType.rademacher)  # fmt: skip
    traker = TRAKer(model=model, task="image_classification", train_set_size=len(X),
                    save_dir=workdir, load_from_save_dir=True, device="cpu", proj_dim=k,
                    use_half_precision=False, projector=projector,
                    logging_level=logging.ERROR)  # fmt: skip
    traker.load_checkpoint(model.state_dict(), model_id=0)
    start = time.process_time()
    for xb, yb in _batches(X, y, batch):
        traker.featurize(batch=(xb, yb), num_samples=len(xb))
    return time.process_time() - start


def throughput(args, fresh) -> None:
    """Issue 35's measurement, in one run: our FactGraSS against dattri's at widths 1024 to
    4096 (goal ≥ 2× on CPU), the model pass alone as the floor, and peak memory beside traker
    at equal k."""
    batches = tuple(args.batches)
    rates, memory = [], []
    for width in args.widths:
        r = fresh(throughput_rates, width, args.k, args.samples, batches, args.repeats)
        for method in THROUGHPUT_METHODS:
            rates.append([width, method, *(r[method, b] for b in batches)])
            print(rates[-1], flush=True)
        for method in (*THROUGHPUT_METHODS, "traker"):
            if method == "traker" and width not in TRAKER_WIDTHS:
                continue
            n = args.traker_samples if method == "traker" else args.samples
            m = fresh(memory_of, method, width, args.k, n, batches[0])
            memory.append([width, m["p"], method, m.get("samples/s"), m["peak MiB"]])
            print(memory[-1], flush=True)
    print(
        f"compression to k = {args.k} of {args.samples} digits through an MLP 64-d-d-10, one "
        f"thread, CPU time: samples/s, best (median) of {args.repeats} rounds in which the "
        "methods alternate in one process, after a warm-up batch"
    )
    cells = [[w, m, *(f"{a:,.0f} ({b:,.0f})" for a, b in v)] for w, m, *v in rates]
    print(table(cells, ["width d", "method", *(f"batch {b}" for b in batches)]))
    for width in args.widths:
        got = {m: v for w, m, *v in rates if w == width}
        for i, b in enumerate(batches):
            a, d = got["paperplug factgrass"][i], got["dattri factgrass"][i]
            floor = got["factors only"][i]
            print(f"d = {width}, batch {b}: ours / dattri = {a[0] / d[0]:.2f} (best), "
                  f"{a[1] / d[1]:.2f} (median); floor / dattri = {floor[0] / d[0]:.2f}")  # fmt: skip
    print(
        f"peak resident memory of one pass (batch {batches[0]}) in a fresh process; traker "
        f"featurizes {args.traker_samples} samples at k = {args.k}"
    )
    cells = [[w, p, m, "" if s is None else f"{s:,.1f}", f"{mb:,.0f}"]
             for w, p, m, s, mb in memory]  # fmt: skip
    print(table(cells, ["width d", "parameters p", "method", "samples/s", "peak MiB"]))


def conv_row(kind: str, reduced: bool) -> dict:
    """In a fresh process: CPU s and peak memory of one batch of 128 CIFAR-sized inputs
    (3 × 32 × 32) through a CNN of three 3 × 3 convs (64 channels) and a linear head, to
    k = 1024 features, with the full unfolded factors (`layer_factors`, then `compress`) or
    reduced in the pass (`maps`: what `GradientFeatures` does)."""
    import time

    import torch
    from paperplug_grass.attributor import GradientFeatures
    from paperplug_grass.gradients import layer_factors
    from torch import nn

    from paperplug import seeded_torch
    from paperplug.harness import peak_memory_mb

    single_thread()
    with seeded_torch(0):
        convs = [nn.Conv2d(3 if i == 0 else 64, 64, 3, padding=1) for i in range(3)]
        model = nn.Sequential(*(m for c in convs for m in (c, nn.ReLU())),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).eval()  # fmt: skip
        X = torch.randn(128, 3, 32, 32)
    y = torch.arange(128) % 10
    features = GradientFeatures(kind, 1024, batch_size=128)
    features(model, X[:2], y[:2])  # draws the projection
    fc, before = features.compressor, peak_memory_mb()
    start = time.process_time()
    maps = fc.maps if reduced else None
    fc.compress(layer_factors(model, X, y, "margin", features.names, maps), reduced=reduced)
    return {"CPU s": time.process_time() - start, "before": before, "peak MiB": peak_memory_mb()}


PEER_LAMBDAS = (1e-1, 10.0, 1e3)
MEMORY_METHODS = (
    "traker",
    "dattri logra",
    "dattri factgrass",
    "paperplug gauss",
    "paperplug logra",
    "paperplug factgrass",
)


def _batches(X, y, size=100):
    import torch

    for i in range(0, len(X), size):
        yield torch.as_tensor(X[i : i + size]), torch.as_tensor(y[i : i + size], dtype=torch.long)


def traker_scores(
    ckpts, data, k: int, lam: float, workdir: str, seed: int = 0
) -> tuple[object, float, float]:
    """TRAK's scores for validation + test points (n_train, n_val + n_test), its CPU time, and
    the CPU time of featurizing the training points (one pass per checkpoint)."""
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
        seed=seed,
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
    featurize = time.process_time() - start
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
    return scores, time.process_time() - start, featurize


OURS = (  # (kind, preconditioner); "auto" is block for LoGra / FactGraSS, full otherwise
    ("gauss", "auto"),
    ("grass", "auto"),
    ("logra", "auto"),
    ("factgrass", "auto"),
    ("logra", "full"),
    ("factgrass", "full"),
)
PEERS = ("ours", "dattri", "traker")


def lds_beside_peers(
    ks=(256, 1024),
    seeds=SEEDS,
    traker_seeds=SEEDS,
    peers=PEERS,
    checkpoints: int = 2,
    models: int = 100,
) -> tuple[list[list], list[list]]:
    """Test LDS at equal k of traker, dattri's LoGra / FactGraSS (through `dattri_adapter`) and
    our attributor, each projection seed its own run with λ chosen on the validation points:
    (summary rows, per-seed rows)."""
    import tempfile
    from collections import Counter

    import dattri_adapter
    from paperplug_grass.attributor import DAMPING_GRID, InfluenceAttributor
    from paperplug_grass.datamodeling import lds
    from paperplug_grass.embedded import digits, ground_truth, train

    single_thread()
    data = digits(0)
    ckpts = [train(data.X, data.y, seed=s) for s in range(checkpoints)]
    subsets, val, test = ground_truth(data, n_models=models)
    nv = len(data.X_val)

    def best(scores_by_lam: dict) -> tuple[float, float]:
        """(test LDS, λ) at the λ with the best validation LDS (ties: the smaller λ)."""
        vals = {lam: lds(s[:, :nv], subsets, val)[0] for lam, s in scores_by_lam.items()}
        lam = max(vals, key=lambda v: (vals[v], -v))
        return lds(scores_by_lam[lam][:, nv:], subsets, test)[0], lam

    per_seed = []  # ours and dattri first, traker (the slowest) last
    for k in ks:
        for kind in ("logra", "factgrass") if "dattri" in peers else ():
            for seed in seeds:
                runs, cpu = dattri_adapter.scores_per_damping(
                    kind, ckpts, data, k, DAMPING_GRID, seed
                )
                per_seed.append([k, f"dattri {kind}", seed, *best(runs), cpu])
                print(per_seed[-1], flush=True)
        for kind, pre in OURS if "ours" in peers else ():
            for seed in seeds:
                a = InfluenceAttributor(kind, k, seed=seed, preconditioner=pre)
                a.cache(ckpts, data.X, data.y)
                lam = a.choose_damping(data.X_val, data.y_val, subsets, val)  # 10^-7 ... 10^2
                score = lds(a.attribute(data.X_test, data.y_test), subsets, test)[0]
                name = f"paperplug {kind}, {a.preconditioner} eFIM"
                per_seed.append([k, name, seed, score, lam, a.compression_seconds])
                print(per_seed[-1], flush=True)
    for k in ks:
        for seed in traker_seeds if "traker" in peers else ():
            runs, cpu = {}, 0.0
            for lam in PEER_LAMBDAS:
                with tempfile.TemporaryDirectory() as tmp:
                    runs[lam], seconds, _ = traker_scores(ckpts, data, k, lam, f"{tmp}/t", seed)
                cpu += seconds
            per_seed.append([k, "traker (Rademacher JL)", seed, *best(runs), cpu])
            print(per_seed[-1], flush=True)
    summary = []
    for k in ks:
        methods = dict.fromkeys(r[1] for r in per_seed if r[0] == k)  # first-seen order
        for method in methods:
            rows = [r for r in per_seed if r[0] == k and r[1] == method]
            lams = Counter(f"{r[4]:g}" for r in rows).most_common()
            summary.append(
                [
                    k,
                    method,
                    len(rows),
                    fmt_ci([r[3] for r in rows]),
                    ", ".join(f"{lam} ×{n}" for lam, n in lams),
                    sum(r[5] for r in rows) / len(rows),
                ]
            )
    return summary, per_seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, help="samples timed (64; --throughput: 128)")
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--skip-widths", action="store_true")
    parser.add_argument("--kinds", nargs="+", default=KINDS, help="width-sweep rows")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--seeds", type=int, default=len(SEEDS), help="projection seeds")
    parser.add_argument("--traker-seeds", type=int, default=len(SEEDS))
    parser.add_argument("--peers", nargs="+", default=PEERS, choices=PEERS)
    parser.add_argument("--throughput", action="store_true",
                        help="only issue 35's run: FactGraSS beside dattri's at widths 1024-4096 "
                        "and peak memory beside traker")  # fmt: skip
    parser.add_argument("--conv", action="store_true",
                        help="only the conv factors' cost: full unfolded against reduced in the pass")  # fmt: skip
    parser.add_argument("--widths", type=int, nargs="+", default=THROUGHPUT_WIDTHS)
    parser.add_argument("--batches", type=int, nargs="+", default=(16, 64))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--traker-samples", type=int, default=16)
    args = parser.parse_args()
    ctx = mp.get_context("spawn")

    def fresh(fn, *a) -> dict:
        # the parent stays small (no torch imported) until the peer run below: a spawned
        # process inherits its parent's peak resident memory figure
        with ctx.Pool(1) as pool:
            return pool.apply(fn, a)

    if args.conv:
        rows = []
        for kind in ("factgrass", "logra"):
            for reduced in (False, True):
                r = fresh(conv_row, kind, reduced)
                how = "reduced in the pass" if reduced else "full unfolded factors"
                rows.append([kind, how, r["CPU s"], r["before"], r["peak MiB"]])
        print("one batch of 128 3×32×32 inputs, CNN 3 × conv3×3(64) + linear, k = 1024, one thread")
        print(table(rows, ["kind", "factors", "CPU s", "MiB before", "peak MiB"], digits=2))
        return
    if args.throughput:
        args.samples = args.samples or 128
        throughput(args, fresh)
        return

    args.samples = args.samples or 64
    rows = []
    for width in () if args.skip_widths else WIDTHS:
        for kind in args.kinds:
            reason = feasible(kind, width, args.k)
            if reason:
                rows.append([width, kind, None, None, None, reason])
                continue
            r = fresh(one, kind, width, args.k, args.samples)
            rows.append([width, kind, r["p"], r["samples/s"], r["peak MiB"], ""])
            print(rows[-1], flush=True)
    if rows:
        print(
            f"per-sample gradient compression to k = {args.k}, {args.samples} samples, batch 16, "
            "one thread, CPU time; each row a fresh process"
        )
        print(
            table(
                rows,
                ["width d", "compressor", "parameters p", "samples/s", "peak MiB", "note"],
                digits=1,
            ),
            flush=True,
        )

    rows = []
    for k in () if args.skip_memory else (256, 1024):
        for method in MEMORY_METHODS:
            r = fresh(memory_row, method, k)
            rows.append([k, method, r["samples/s"], r["CPU s"], r["peak MiB"]])
            print(rows[-1], flush=True)
    if rows:
        print(
            "one attribution on the digits MLP (one checkpoint, 1000 training points, 200 query "
            "points, one λ), each row a fresh process; samples/s: the training features, CPU time"
        )
        print(table(rows, ["k", "method", "samples/s", "CPU s (all)", "peak MiB"], digits=1))

    if not args.skip_peer:
        summary, per_seed = lds_beside_peers(
            seeds=SEEDS[: args.seeds], traker_seeds=SEEDS[: args.traker_seeds], peers=args.peers
        )
        header = ["k", "method", "seed", "test LDS", "λ", "CPU s"]
        print(table(per_seed, header), flush=True)
        print(
            "LDS on the digits MLP beside traker and dattri: 2 checkpoints, 100 subset models, "
            f"λ chosen per seed on the validation points (traker from {PEER_LAMBDAS}, each λ a "
            "full run; dattri's relative λ and ours from 10^-7 ... 10^2); mean ± 95% interval "
            "over projection seeds; CPU s per seed (traker: all its λ runs; dattri: caching)"
        )
        print(table(summary, ["k", "method", "seeds", "test LDS", "λ chosen", "CPU s"]))


if __name__ == "__main__":
    main()
