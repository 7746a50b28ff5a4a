"""The paper's own regime at small scale: many pairs from one distribution, labelled by a
consensus of judges (Alg. 1), split by query into train and test from that same distribution.

Pool: the numpydoc docstrings of numpy, scipy, scikit-learn, pandas, networkx and matplotlib
(the held-out builders' text, widened to every object with a summary). The query is an
object's one-line summary; its documents: the rest of its docstring, up to three objects its
See Also links, three other objects of its module and three of other modules.
Judges, in Alg. 1's order: SmolLM2-135M-Instruct (`DigitJudge`: the expected grade digit, one
forward pass) on a subsample of queries; the structural grade (own 1, linked 0.6, same module
0.2, other module 0); a lexical judge (the share of the query's content words the document
holds).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
from heldout import DATAFRAMES, SCIENTIFIC, RetrievalSet, _Builder, _resolve, _unique_objects
from paperplug_eareranker import aggregate_judges
from paperplug_eareranker.embedders import cache_dir

MODULES = {**SCIENTIFIC, **DATAFRAMES,
           "scipy-more": ["scipy.special", "scipy.fft", "scipy.io", "scipy.odr"],
           "numpy-more": ["numpy.random", "numpy.polynomial", "numpy.lib"],
           "networkx-more": ["networkx.algorithms"], "pandas-more": ["pandas.plotting"],
           "matplotlib-more": ["matplotlib.axes", "matplotlib.figure", "matplotlib.colors"],
           "sklearn-more": ["sklearn.utils", "sklearn.kernel_approximation", "sklearn.cross_decomposition",
                            "sklearn.semi_supervised", "sklearn.discriminant_analysis",
                            "sklearn.gaussian_process", "sklearn.neural_network", "sklearn.random_projection",
                            "sklearn.calibration", "sklearn.compose", "sklearn.pipeline", "sklearn.multiclass",
                            "sklearn.dummy", "sklearn.isotonic", "sklearn.kernel_ridge",
                            "sklearn.feature_extraction.text", "sklearn.inspection"]}  # fmt: skip
STRUCTURE = (1.0, 0.6, 0.2, 0.0)  # own docstring, a See Also link, same module, other module
STOP = {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "its",
        "of", "on", "or", "that", "the", "this", "to", "with", "which", "each", "given", "if", "not",
        "all", "any", "can", "may", "using", "use", "used", "return", "returns"}  # fmt: skip


def pool(seed: int = 0) -> RetrievalSet:
    """Every numpydoc object with a summary as a query, 7-10 graded documents each; `grade` is
    the structural grade in [0, 1]."""
    rng = np.random.default_rng(seed)
    objects = _unique_objects(MODULES)
    names = sorted(objects)
    module = {q: v[0].split("|")[1] for q, v in objects.items()}
    builder = _Builder("numpydoc pool (numpy, scipy, scikit-learn, pandas, networkx, matplotlib)", "pool")  # fmt: skip
    for g, q in enumerate(names):
        links = {_resolve(link, module[q], objects) for link in objects[q][3]} - {None, q}
        linked = sorted(links)
        related = [linked[i] for i in rng.permutation(len(linked))[:3]]
        same = [n for n in names if module[n] == module[q] and n != q and n not in links]
        other = [n for n in names if module[n] != module[q] and n not in links]
        docs = [(q, STRUCTURE[0])] + [(r, STRUCTURE[1]) for r in related]
        docs += [(same[i], STRUCTURE[2]) for i in rng.permutation(len(same))[:3]]
        docs += [(other[i], STRUCTURE[3]) for i in rng.permutation(len(other))[: 6 - min(3, len(same))]]  # fmt: skip
        builder.add(g, objects[q][1], [(objects[d][2], grade) for d, grade in docs])
    return builder.done()


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9_]+", text.lower()) if w not in STOP}


def lexical(texts: list[str], query: np.ndarray, document: np.ndarray) -> np.ndarray:
    """The share of each query's content words that its document holds, in [0, 1]."""
    words = [_words(t) for t in texts]
    return np.array([len(words[q] & words[d]) / max(1, len(words[q])) for q, d in zip(query, document, strict=True)])  # fmt: skip


def llm_grades(p: RetrievalSet, rows: np.ndarray, judge) -> np.ndarray:
    """The DigitJudge's grade of each pair in `rows` (NaN elsewhere), cached on disk by the
    pairs' texts and the judge's prompt."""
    key = hashlib.blake2b(digest_size=16)
    key.update((judge.prompt + judge.prefill + str(judge.top) + str(judge.max_words)).encode())
    for r in rows:
        key.update(p.texts[p.query[r]].encode() + b"\x00" + p.texts[p.document[r]].encode() + b"\x01")  # fmt: skip
    path = cache_dir() / f"llm-judge-{key.hexdigest()}.npy"
    if path.is_file():
        graded = np.load(path)
    else:
        graded = np.array([judge.grade(p.texts[p.query[r]], p.texts[p.document[r]]) for r in rows])  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, graded)
    out = np.full(len(p.query), np.nan)
    out[rows] = graded
    return out


def consensus(grades: np.ndarray, *, tol: float = 0.2) -> tuple[np.ndarray, list[str]]:
    """Alg. 1 per pair over the judges' columns (NaN: that judge did not grade the pair): the
    first two usable grades when they agree, else the first agreeing pair, else the mean."""
    labels, branches = [], []
    for row in grades:
        usable = row[~np.isnan(row)]
        label, branch = aggregate_judges(usable, first=2, tol=tol)
        labels.append(label)
        branches.append(branch)
    return np.array(labels, dtype=np.float32), branches


def llm_rows(p: RetrievalSet, n_queries: int, seed: int = 0) -> np.ndarray:
    """The pairs of `n_queries` queries drawn at random: the LLM judge's subsample."""
    groups = np.unique(p.group)
    chosen = np.random.default_rng(seed).permutation(groups)[:n_queries]
    return np.flatnonzero(np.isin(p.group, chosen))
