"""Length-varied training replies (ours): FineHarm-format examples stitched into long replies.

A monitor trained only on short replies has never read a token hundreds of positions into a
reply, and there its token scores drift upward until benign words cross θ (README, "Long
replies"). Stitching the training set's own replies, with their word labels, into replies of
log-uniformly drawn lengths up to the longest the monitor will serve teaches the token head
the same decision at every depth: a benign stitched reply joins benign replies; a harmful one
puts one harmful reply at a random depth of benign text, then may go on benignly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from paperplug.checks import check_scalar
from paperplug_scm.fineharm import check_examples, validate_example


def n_words(example: dict[str, Any]) -> int:
    """Whitespace-separated words of an example's reply."""
    validate_example(example)
    return sum(len(s.split()) for s in example["sentences"])


def _append(reply: dict[str, Any], example: dict[str, Any]) -> None:
    for key in ("sentences", "sentence_labels", "words", "word_labels"):
        reply[key] += [list(v) if isinstance(v, list) else v for v in example[key]]


def stitch_replies(
    examples: Sequence[dict[str, Any]],
    n: int,
    *,
    min_words: int = 100,
    max_words: int = 4000,
    harmful_fraction: float = 0.5,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """`n` FineHarm-format replies stitched from `examples`, their labels kept (the inputs are
    untouched). Each draws a length log-uniformly in [min_words, max_words] and adds benign
    replies until it is reached (overshooting by less than one reply); a share
    `harmful_fraction` holds one harmful reply at a uniform depth, and half of those end with
    it. Each answers the prompt of the reply it starts with."""
    examples = check_examples(examples, "examples")
    n = check_scalar(n, "n", "int", low=0)
    check_scalar(seed, "seed", "int", low=0)
    min_words = check_scalar(min_words, "min_words", "int", low=1)
    max_words = check_scalar(max_words, "max_words", "int", low=min_words)
    harmful_fraction = check_scalar(harmful_fraction, "harmful_fraction", low=0.0, high=1.0)
    benign = [ex for ex in examples if not any(int(y) for y in ex["sentence_labels"])]
    harmful = [ex for ex in examples if any(int(y) for y in ex["sentence_labels"])]
    if n and not benign:
        raise ValueError("examples must hold benign replies to stitch long replies from")
    if n and harmful_fraction > 0 and not harmful:
        raise ValueError("examples hold no harmful reply: set harmful_fraction=0 or add some")
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        target = round(math.exp(rng.uniform(math.log(min_words), math.log(max_words))))
        inserted = rng.choice(harmful) if harmful and rng.random() < harmful_fraction else None
        depth = rng.uniform(0.0, 1.0) * max(target - n_words(inserted), 0) if inserted else 0
        reply: dict[str, Any] = {"prompt": inserted["prompt"] if inserted else ""}
        reply.update(sentences=[], sentence_labels=[], words=[], word_labels=[])
        words = 0
        while words < target or inserted is not None:
            if inserted is not None and words >= depth:
                ex, inserted = inserted, None
                ends = rng.random() < 0.5  # a harmful reply often ends with its harm
            else:
                ex, ends = rng.choice(benign), False
            if not reply["prompt"]:
                reply["prompt"] = ex["prompt"]
            _append(reply, ex)
            words += n_words(ex)
            if ends:
                break
        out.append(reply)
    return out
