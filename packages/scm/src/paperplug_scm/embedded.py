"""The embedded default's data and models, shared by demo.py and bench/run.py: a generated
FineHarm-like set (`synthetic.py`), SCM and its baselines trained on it with a tiny random
Qwen2, and long benign replies for the cost and false-stop measurements. Offline, CPU."""

from __future__ import annotations

from typing import Any

from paperplug.checks import check_choice, check_scalar
from paperplug_scm.synthetic import make_fineharm_like

# A random-init tiny backbone needs a larger step than the paper's 1e-4 (at 1e-4 the 0.99 per
# step schedule decays before a from-scratch model learns).
EMBEDDED_TRAINING: dict[str, float] = {"learning_rate": 1e-3, "lr_decay": 0.995}

# The paper's reading and stopping: the whole reply, the cumulative delay-k, θ/k from the
# validation replies alone, no stitched training replies.
PAPER_READING: dict[str, Any] = {"frame": None, "window": None, "long_replies": 0.0, "val_long": 0}

VARIANTS: dict[str, dict[str, Any]] = {
    "scm": {},  # the default: frames, stitched benign replies, long-aware θ/k, window 16
    "scm_paper": PAPER_READING,  # the paper's dual supervision with the logic loss
    "scm_no_logic": {**PAPER_READING, "gamma": 0.0},  # the ablation without L_logic
    # full detector on prefixes
    "full": {**PAPER_READING, "alpha": 0.0, "gamma": 0.0, "head": "response"},
    # issue 34: + a tenth as many benign replies of 100-4000 words stitched from the data
    "scm_long": {**PAPER_READING, "long_replies": 0.1, "long_words": 4000},
    # ablations of the default, one part each
    "no_frame": {"frame": None},
    "no_stitched": {"long_replies": 0.0},
    "no_long_val": {"val_long": 0},
    "no_window": {"window": None},
}


def load_data(
    seed: int = 0, n_train: int = 800, n_val: int = 200, n_test: int = 400
) -> tuple[list[dict], list[dict], list[dict]]:
    """(train, validation, test) FineHarm-format splits of one generated set."""
    check_scalar(n_train, "n_train", "int", low=1)
    check_scalar(n_val, "n_val", "int", low=0)
    check_scalar(n_test, "n_test", "int", low=0)
    data = make_fineharm_like(n_train + n_val + n_test, seed=seed)
    return data[:n_train], data[n_train : n_train + n_val], data[n_train + n_val :]


def train_variant(
    name: str, train: list[dict], val: list[dict], *, seed: int = 0, **kw: Any
) -> Any:
    """One of VARIANTS trained with the embedded settings (θ, k chosen on `val`)."""
    from paperplug_scm.training import SCMTrainer

    check_choice(name, "name", sorted(VARIANTS))
    settings = {**EMBEDDED_TRAINING, **VARIANTS[name], **kw}
    return SCMTrainer(seed=seed, **settings).fit(train, val)


def long_reply(n_words: int, seed: int = 0) -> tuple[str, str]:
    """(prompt, reply): a benign reply of exactly `n_words` whitespace-separated words, made
    of the generator's benign sentences (refusals, safety advice and everyday answers)."""
    check_scalar(n_words, "n_words", "int", low=1)
    check_scalar(seed, "seed", "int", low=0)
    words: list[str] = []
    prompt = ""
    batch = 0
    while len(words) < n_words:
        for ex in make_fineharm_like(64, harmful_fraction=0.0, seed=seed * 1000 + batch):
            prompt = prompt or ex["prompt"]
            for sentence in ex["sentences"]:
                words += sentence.split(" ")
        batch += 1
    return prompt, " ".join(words[:n_words])
