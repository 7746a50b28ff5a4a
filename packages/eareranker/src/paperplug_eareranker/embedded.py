"""The embedded default's data, shared by demo.py and bench/run.py: graded query–document pairs
built offline from Python standard-library docstrings with a transparent rubric (an adequacy
proxy, not the paper's LLM-judge labels), embedded with the real MiniLM.

For a function's docstring, the query is its first sentence; the documents and their labels:
the rest of the docstring 0.95; its first half 0.80; its last third 0.60; another object of
the same module 0.35; three sentences of another module 0.15; another module's docstring 0.03.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass

import numpy as np

MODULES = [
    "abc",
    "argparse",
    "ast",
    "base64",
    "bisect",
    "calendar",
    "cmd",
    "codecs",
    "collections",
    "colorsys",
    "configparser",
    "contextlib",
    "copy",
    "csv",
    "datetime",
    "decimal",
    "difflib",
    "dis",
    "enum",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "getopt",
    "gettext",
    "glob",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "imaplib",
    "inspect",
    "ipaddress",
    "itertools",
    "json",
    "logging",
    "lzma",
    "mailbox",
    "mimetypes",
    "operator",
    "optparse",
    "os",
    "pathlib",
    "pickle",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "pprint",
    "queue",
    "quopri",
    "random",
    "re",
    "sched",
    "secrets",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "smtplib",
    "socket",
    "sqlite3",
    "ssl",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "timeit",
    "tokenize",
    "traceback",
    "typing",
    "unittest",
    "uuid",
    "warnings",
    "wave",
    "weakref",
    "zipfile",
]
RUBRIC = (("rest of the docstring", 0.95), ("its first half", 0.80), ("its last third", 0.60),
          ("same module, other object", 0.35), ("three sentences, other module", 0.15),
          ("other module's docstring", 0.03))  # fmt: skip
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Pairs:
    """Pairs as indices into `texts`: query i, document j, label, and the query's id (group)."""

    texts: list[str]
    query: np.ndarray
    document: np.ndarray
    label: np.ndarray
    group: np.ndarray
    module: list[str]  # per query group


def _docs() -> dict[str, list[str]]:
    out = {}
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        docs = []
        for attr, obj in sorted(vars(module).items()):
            if attr.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if getattr(obj, "__module__", None) != name:
                continue
            doc = " ".join((inspect.getdoc(obj) or "").split())
            if len(doc.split()) >= 30:
                docs.append(doc)
        if len(docs) >= 2:
            out[name] = docs
    return out


def docstring_pairs(max_queries: int = 400, seed: int = 0) -> Pairs:
    """Six graded documents per query, queries drawn from up to `max_queries` docstrings."""
    rng = np.random.default_rng(seed)
    docs = _docs()
    modules = sorted(docs)
    candidates = [(m, d) for m in modules for d in docs[m]]
    chosen = [candidates[i] for i in sorted(rng.permutation(len(candidates))[:max_queries])]
    texts: list[str] = []
    index: dict[str, int] = {}

    def add(text: str) -> int:
        if text not in index:
            index[text] = len(texts)
            texts.append(text)
        return index[text]

    rows, group_modules = [], []
    for _g, (module, doc) in enumerate(chosen):
        sentences = _SENTENCE.split(doc)
        query, rest = sentences[0], " ".join(sentences[1:]).split()
        if len(rest) < 15:
            continue
        others = [m for m in modules if m != module]
        other_module = others[int(rng.integers(len(others)))]
        same = [d for d in docs[module] if d != doc]
        far = docs[other_module][int(rng.integers(len(docs[other_module])))]
        far_sentences = _SENTENCE.split(docs[others[int(rng.integers(len(others)))]][0])
        documents = [
            " ".join(rest),
            " ".join(rest[: len(rest) // 2]),
            " ".join(rest[-max(5, len(rest) // 3) :]),
            same[int(rng.integers(len(same)))],
            " ".join(far_sentences[:3]),
            far,
        ]
        q = add(query)
        for text, (_, label) in zip(documents, RUBRIC, strict=True):
            rows.append((q, add(text), label, len(group_modules)))
        group_modules.append(module)
    q, d, y, grp = (np.array(col) for col in zip(*rows, strict=True))
    return Pairs(texts, q, d, y.astype(np.float32), grp, group_modules)


def split_by_query(
    pairs: Pairs, test_fraction: float = 0.2, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (train, test) over pairs, whole queries on one side."""
    groups = np.unique(pairs.group)
    test_groups = np.random.default_rng(seed).permutation(groups)[
        : round(test_fraction * len(groups))
    ]
    test = np.isin(pairs.group, test_groups)
    return ~test, test


def embedded_pairs(max_queries: int = 400, seed: int = 0) -> tuple[Pairs, np.ndarray]:
    """The pairs and the MiniLM embedding of every text (cached on disk after the first run)."""
    from paperplug_eareranker.embedders import encode

    pairs = docstring_pairs(max_queries, seed)
    return pairs, encode(pairs.texts)
