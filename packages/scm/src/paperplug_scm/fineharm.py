"""FineHarm data handling (paper §3): sentence and word labels to token labels, and loaders.

An example holds `prompt`, `sentences`, `sentence_labels` (1 = harmful) and, per sentence,
`words` and `word_labels` (1 = notional word of a harmful sentence). Token labels: a token is
1 if it overlaps a word labelled 1, 0 if it overlaps only words labelled 0, and -100 (ignored)
on the prompt and on tokens that overlap no word. The response label is any(sentence_labels).
"""

from __future__ import annotations

import bisect
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paperplug.checks import (
    check_choice,
    check_name_or_path,
    check_scalar,
    check_sequence,
    check_type,
)
from paperplug.extras import requires_extra

IGNORE_INDEX = -100
FIELDS = ("prompt", "sentences", "sentence_labels", "words", "word_labels")


@dataclass(frozen=True)
class EncodedExample:
    """Token ids of prompt + separator + response, one label per token, the response label."""

    input_ids: list[int]
    token_labels: list[int]
    response_label: int
    response_start: int  # index of the first response token


def validate_example(example: Any, name: str = "example") -> None:
    """Raise a ValueError/TypeError naming `name` (e.g. "train[3]") and what is wrong with a
    FineHarm-format example."""
    check_type(name, "name", str)
    check_type(example, name, dict, what="a FineHarm-format dict")
    missing = [f for f in FIELDS if f not in example]
    if missing:
        raise ValueError(f"{name} lacks field(s) {missing}; expected {list(FIELDS)}")
    check_type(example["prompt"], f"{name}['prompt']", str)
    sentences = check_sequence(example["sentences"], f"{name}['sentences']", str)
    for key in ("sentence_labels", "words", "word_labels"):
        if len(check_sequence(example[key], f"{name}[{key!r}]", min_len=0)) != len(sentences):
            raise ValueError(
                f"{name}[{key!r}] has {len(example[key])} items, not {len(sentences)} (sentences)"
            )
    for j, (y, w, wl) in enumerate(
        zip(example["sentence_labels"], example["words"], example["word_labels"], strict=True)
    ):
        check_choice(y, f"{name}['sentence_labels'][{j}]", (0, 1))
        if len(w) != len(wl):
            raise ValueError(f"{name}, sentence {j}: {len(w)} words but {len(wl)} word labels")


def check_examples(value: Any, name: str) -> list[dict[str, Any]]:
    """A non-empty list of valid FineHarm-format examples; errors name `name[i]`."""
    check_type(name, "name", str)
    examples = check_sequence(value, name, dict, what="FineHarm-format dicts")
    for i, ex in enumerate(examples):
        validate_example(ex, f"{name}[{i}]")
    return examples


def response_text(example: dict[str, Any], sep: str = " ") -> str:
    """The response as streamed text: the sentences joined by `sep`."""
    validate_example(example)
    return check_type(sep, "sep", str).join(example["sentences"])


def prompt_prefix(prompt: str) -> str:
    """What precedes the response: the prompt and a blank line (as the released code builds it)."""
    return prompt + "\n\n" if prompt else ""


def encode_prompt(tokenizer: Any, prompt: str) -> list[int]:
    """Token ids the monitor reads before the response: BOS (if any), prompt, separator."""
    ids = tokenizer(prompt_prefix(prompt), add_special_tokens=False)["input_ids"] if prompt else []
    bos = getattr(tokenizer, "bos_token_id", None)
    return ([bos] if bos is not None else []) + list(ids)


def _word_spans(text: str, words: list[list[str]], sentences: list[str], sep: str) -> list[tuple]:
    """(start, end) of every word in `text`, found left to right inside its sentence."""
    spans, offset = [], 0
    for j, (sentence, sentence_words) in enumerate(zip(sentences, words, strict=True)):
        cursor = 0
        for w in sentence_words:
            at = sentence.find(w, cursor)
            if at < 0:
                raise ValueError(f"word {w!r} not found in sentence {j}: {sentence!r}")
            spans.append((offset + at, offset + at + len(w)))
            cursor = at + len(w)
        offset += len(sentence) + len(sep)
    return spans


def token_labels(
    example: dict[str, Any], tokenizer: Any, *, sep: str = " ", max_length: int = 4096
) -> EncodedExample:
    """Sentence/word labels to token labels on one example (the FineHarm recipe, §3)."""
    validate_example(example)
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError(
            "tokenizer must be a fast tokenizer (offset mapping): token_labels aligns words"
        )
    check_type(sep, "sep", str)
    check_scalar(max_length, "max_length", "int", low=1)
    prompt_ids = encode_prompt(tokenizer, example["prompt"])
    text = response_text(example, sep)
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    spans = _word_spans(text, example["words"], example["sentences"], sep)
    flat = [int(v) for wl in example["word_labels"] for v in wl]
    ends = [we for _, we in spans]  # words are left to right: their ends increase
    labels = []
    for start, end in enc["offset_mapping"]:
        j, hit = bisect.bisect_right(ends, start), []  # the first word ending after `start`
        while j < len(spans) and spans[j][0] < end:
            hit.append(flat[j])
            j += 1
        labels.append(int(any(hit)) if hit else IGNORE_INDEX)
    ids = (prompt_ids + list(enc["input_ids"]))[:max_length]
    labels = ([IGNORE_INDEX] * len(prompt_ids) + labels)[:max_length]
    harmful = any(int(y) for y in example["sentence_labels"])
    if len(ids) < len(prompt_ids) + len(enc["input_ids"]):  # truncated: judge what is kept,
        harmful = 1 in labels  # or the logic loss asks a benign prefix for a harmful token
    return EncodedExample(
        input_ids=ids,
        token_labels=labels,
        response_label=int(harmful),
        response_start=min(len(prompt_ids), len(ids)),
    )


def encode_fineharm(
    examples: list[dict[str, Any]], tokenizer: Any, *, sep: str = " ", max_length: int = 4096
) -> list[EncodedExample]:
    """`token_labels` over a list of examples (validated first, so errors name the index)."""
    examples = check_examples(examples, "examples")
    check_type(sep, "sep", str)
    check_scalar(max_length, "max_length", "int", low=1)
    return [token_labels(ex, tokenizer, sep=sep, max_length=max_length) for ex in examples]


def _normalise(row: dict[str, Any], index: int) -> dict[str, Any]:
    example = {f: row[f] for f in FIELDS if f in row}
    validate_example(example, f"row {index}")
    return {
        "prompt": example["prompt"],
        "sentences": list(example["sentences"]),
        "sentence_labels": [int(y) for y in example["sentence_labels"]],
        "words": [list(w) for w in example["words"]],
        "word_labels": [[int(v) for v in wl] for wl in example["word_labels"]],
    }


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """A user's own FineHarm-shaped data: one JSON object per line with the five fields."""
    rows = []
    check_type(path, "path", (str, os.PathLike), what="a file path")
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{line_no} is not JSON: {e}") from e
    return [_normalise(r, i) for i, r in enumerate(rows)]


def load_fineharm(
    path_or_name: str | os.PathLike[str] = "liyang-ict/FineHarm", split: str = "train"
) -> list[dict[str, Any]]:
    """The FineHarm release through Hugging Face `datasets`: a hub name or a local folder/file.

    A local folder may be a `save_to_disk` dataset or hold JSON/JSONL files named after the
    splits (`train_new.json`, `valid_new.json`, `test_new.json` as released, or `train.jsonl`...).
    """
    name = check_name_or_path(path_or_name, "path_or_name")
    check_type(split, "split", str)
    if not split.strip():
        raise ValueError("split must name a split ('train', 'validation', 'test')")
    path = Path(name)
    with requires_extra("paperplug-scm", "fineharm", "loading the FineHarm release"):
        import datasets
    saved = ("dataset_dict.json", "dataset_info.json", "state.json")
    if path.is_dir() and any((path / n).exists() for n in saved):
        ds = datasets.load_from_disk(str(path))
        ds = ds[split] if isinstance(ds, datasets.DatasetDict) else ds
    elif path.is_dir():
        alias = {"validation": "valid", "val": "valid"}.get(split, split)
        names = [f"{alias}_new.json", f"{alias}.json", f"{alias}.jsonl", f"{split}.jsonl"]
        found = [path / n for n in names if (path / n).exists()]
        if not found:
            raise ValueError(f"split {split!r} is not in {path}: looked for {names}")
        ds = datasets.load_dataset("json", data_files=str(found[0]), split="train")
    elif path.is_file():
        ds = datasets.load_dataset("json", data_files=str(path), split="train")
    else:
        ds = datasets.load_dataset(name, split=split)
    return [_normalise(dict(r), i) for i, r in enumerate(ds)]
