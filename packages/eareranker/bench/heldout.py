"""Held-out retrieval sets that the package does not generate its training pairs from: text that
installed libraries ship, graded by the structure their authors wrote, never by a model.

- numpydoc sets (numpy/scipy/scikit-learn; pandas/networkx/matplotlib): the query is an object's
  one-line summary; its documents are the rest of a docstring (the summary, See Also, Examples
  and References cut) of: the object itself (grade 2), each object its See Also section links
  (grade 1), three other objects of its module and three of other modules (grade 0).
- Python's language reference (`pydoc_data.topics`, shipped with the interpreter): the query is
  a section's heading; its documents are that section's prose (grade 2), up to two sections of
  the same topic (grade 1) and six sections of other topics (grade 0).
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass

import numpy as np

SCIENTIFIC = {"numpy": ["numpy", "numpy.linalg", "numpy.fft", "numpy.ma"],
              "scipy": ["scipy.stats", "scipy.linalg", "scipy.signal", "scipy.optimize",
                        "scipy.interpolate", "scipy.integrate", "scipy.spatial", "scipy.ndimage",
                        "scipy.sparse", "scipy.sparse.linalg", "scipy.cluster.hierarchy"],
              "sklearn": ["sklearn.metrics", "sklearn.preprocessing", "sklearn.linear_model",
                          "sklearn.cluster", "sklearn.decomposition", "sklearn.feature_selection",
                          "sklearn.model_selection", "sklearn.ensemble", "sklearn.neighbors",
                          "sklearn.manifold", "sklearn.svm", "sklearn.tree", "sklearn.impute",
                          "sklearn.covariance", "sklearn.mixture", "sklearn.naive_bayes"]}  # fmt: skip
DATAFRAMES = {"pandas": ["pandas", "pandas.api.types"], "networkx": ["networkx"],
              "matplotlib": ["matplotlib.pyplot"]}  # fmt: skip
_HEADING = re.compile(r"^(\S[^\n]*)\n(-{3,}|={3,})\s*$", re.M)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_DROP = {"see also", "examples", "references", "notes", "warns", "versionadded"}


@dataclass
class RetrievalSet:
    """Graded candidates: text indices of each query and document, the grade (0, 1, 2) and
    the query's id (group)."""

    name: str
    short: str  # a column title
    texts: list[str]
    query: np.ndarray
    document: np.ndarray
    grade: np.ndarray
    group: np.ndarray


def _sections(doc: str) -> tuple[str, str, dict[str, str]]:
    """(summary, the prose after it, {heading: text}) of a numpydoc docstring."""
    heads = list(_HEADING.finditer(doc))
    head_text = doc[: heads[0].start()] if heads else doc
    paragraphs = [p for p in re.split(r"\n\s*\n", head_text.strip()) if p.strip()]
    if not paragraphs:
        return "", "", {}
    sections = {}
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
        sections[m.group(1).strip().lower()] = doc[m.end() : end]
    summary = " ".join(paragraphs[0].split())
    return summary, " ".join(" ".join(paragraphs[1:]).split()), sections


def _sentences(text: str, words: int = 160) -> str:
    """The whole sentences of `text` that fit in `words` words (at least the first): a chunk
    as an index stores it, never cut mid-sentence."""
    out, count = [], 0
    for sentence in _SENTENCE.split(" ".join(text.split())):
        n = len(sentence.split())
        if out and count + n > words:
            break
        out.append(sentence)
        count += n
    return " ".join(out)


def _rest(extended: str, sections: dict[str, str]) -> str:
    """The docstring's text after its summary: extended summary, parameters, returns (what an
    index stores for the object), without See Also, Examples, References and Notes."""
    return _sentences(" ".join([extended] + [t for h, t in sections.items() if h not in _DROP]))


def _see_also(text: str) -> list[str]:
    """Object names a See Also section links (`name : description` lines or comma lists)."""
    names = []
    for line in text.splitlines():
        if not line.strip() or (line.startswith((" " * 4, "\t")) and ":" not in line):
            continue
        head = line.split(" : ")[0] if " : " in line else line
        names += [n.strip(" `~.").split("(")[0] for n in head.split(",") if n.strip()]
    return [n for n in names if re.fullmatch(r"[\w.]+", n)]


def _objects(modules: dict[str, list[str]]) -> dict[str, tuple[str, str, str, list[str]]]:
    """{qualified name: (module, summary, rest, See Also names)} of public functions and
    classes with a summary of 4+ words and a rest of 25+ words."""
    out = {}
    for library, names in modules.items():
        for module_name in names:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            for attr in sorted(getattr(module, "__all__", None) or dir(module)):
                try:
                    obj = getattr(module, attr, None)
                except ImportError:  # experimental names that need an explicit enable
                    continue
                if attr.startswith("_") or not (callable(obj)) or inspect.ismodule(obj):
                    continue
                doc = inspect.getdoc(obj) or ""
                summary, extended, sections = _sections(doc)
                rest = _rest(extended, sections)
                if len(summary.split()) < 4 or len(rest.split()) < 25:
                    continue
                if summary.rstrip(".").count(" ") > 40 or re.match(r"[\w.]+\(", summary):
                    continue  # a signature line or a paragraph, not a summary
                links = _see_also(sections.get("see also", ""))
                out.setdefault(
                    f"{module_name}.{attr}", (library + "|" + module_name, summary, rest, links)
                )
    return out


def _resolve(link: str, module: str, objects: dict) -> str | None:
    """The object a See Also name means: as written, or in the module or library linking it."""
    library = module.split(".")[0]
    for candidate in (link, f"{module}.{link}", f"{library}.{link}",
                      *(f"{m}.{link.split('.')[-1]}" for m in (module, library))):  # fmt: skip
        if candidate in objects:
            return candidate
    return None


def _unique_objects(
    modules: dict[str, list[str]],
) -> dict[str, tuple[str, str, str, list[str]]]:
    """`_objects`, one name per docstring (aliases share one: the first name is kept)."""
    objects = _objects(modules)
    by_rest: dict[str, str] = {}
    for qual, (_, _, rest, _) in objects.items():
        by_rest.setdefault(rest, qual)
    return {q: v for q, v in objects.items() if by_rest[v[2]] == q}


def numpydoc_set(name: str, short: str, modules: dict[str, list[str]], n_queries: int = 120,
                 seed: int = 0) -> RetrievalSet:  # fmt: skip
    """Queries: one-line summaries; documents: the rest of docstrings, graded by See Also."""
    rng = np.random.default_rng(seed)
    objects = _unique_objects(modules)
    names = sorted(objects)
    modules_of = {q: v[0].split("|")[1] for q, v in objects.items()}
    linked = {}
    for q, (_, _, _, links) in objects.items():
        targets = {
            t for t in (_resolve(link, modules_of[q], objects) for link in links) if t and t != q
        }
        if targets:
            linked[q] = sorted(targets)
    linking = sorted(linked)
    chosen = [linking[i] for i in sorted(rng.permutation(len(linking))[:n_queries])]
    builder = _Builder(name, short)
    for g, q in enumerate(chosen):
        related = [linked[q][i] for i in rng.permutation(len(linked[q]))[:3]]
        taken = {q, *related, *linked.get(q, [])}
        same = [n for n in names if modules_of[n] == modules_of[q] and n not in taken]
        other = [n for n in names if modules_of[n] != modules_of[q] and n not in taken]
        negatives = [same[i] for i in rng.permutation(len(same))[:3]]
        negatives += [other[i] for i in rng.permutation(len(other))[: 6 - len(negatives)]]
        docs = [(q, 2)] + [(r, 1) for r in related] + [(n, 0) for n in negatives]
        builder.add(g, objects[q][1], [(objects[d][2], grade) for d, grade in docs])
    return builder.done()


def reference_set(n_queries: int = 120, seed: int = 0) -> RetrievalSet:
    """Queries: section headings of the Python language reference; documents: sections'
    prose (code, grammar and headings cut), graded by the topic they belong to."""
    from pydoc_data.topics import topics

    rng = np.random.default_rng(seed)
    units = []  # (topic, heading, prose)
    for topic in sorted(topics):
        text = "\n" + topics[topic]
        heads = list(re.finditer(r"\n([^\n]+)\n(\*{3,}|={3,}|-{3,})\n", text))
        for i, m in enumerate(heads):
            body = text[m.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
            prose = [p for p in re.split(r"\n\s*\n", body)
                     if p.strip() and not p.startswith("   ") and "::=" not in p]  # fmt: skip
            chunk = _sentences(" ".join(prose))
            if len(chunk.split()) >= 30:
                units.append((topic, m.group(1).strip(), chunk))
    seen, unique = set(), []
    for unit in units:  # a heading repeated across topics (e.g. "Note") is no query
        if unit[1] not in seen and sum(u[1] == unit[1] for u in units) == 1:
            unique.append(unit)
        seen.add(unit[1])
    chosen = [unique[i] for i in sorted(rng.permutation(len(unique))[:n_queries])]
    builder = _Builder("Python language reference (pydoc_data)", "pyref")
    for g, (topic, heading, prose) in enumerate(chosen):
        siblings = [u for u in units if u[0] == topic and u[1] != heading]
        others = [u for u in units if u[0] != topic]
        docs = [(prose, 2)] + [(siblings[i][2], 1) for i in rng.permutation(len(siblings))[:2]]
        docs += [(others[i][2], 0) for i in rng.permutation(len(others))[:6]]
        builder.add(g, heading, docs)
    return builder.done()


class _Builder:
    """Collects (query, document, grade, group) rows, each distinct text stored once."""

    def __init__(self, name: str, short: str) -> None:
        self.name, self.short, self.texts, self.index, self.rows = name, short, [], {}, []

    def _id(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.texts)
            self.texts.append(text)
        return self.index[text]

    def add(self, group: int, query: str, docs: list[tuple[str, int]]) -> None:
        q = self._id(query)
        for text, grade in docs:
            self.rows.append((q, self._id(text), grade, group))

    def done(self) -> RetrievalSet:
        q, d, y, g = (np.array(col) for col in zip(*self.rows, strict=True))
        return RetrievalSet(self.name, self.short, self.texts, q, d, y.astype(np.float32), g)


def heldout_sets(seed: int = 0) -> list[RetrievalSet]:
    """The three held-out sets."""
    return [numpydoc_set("numpy / scipy / scikit-learn docstrings", "sci", SCIENTIFIC, seed=seed),
            numpydoc_set("pandas / networkx / matplotlib docstrings", "pnm", DATAFRAMES, seed=seed),
            reference_set(seed=seed)]  # fmt: skip
