"""SCM checkpoints on disk: the model, its tokenizer and the trainer's settings (θ and k
chosen on validation among them). The trainer writes them; the monitor reads them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from paperplug.checks import check_device, check_type
from paperplug_scm.model import SCMModel
from paperplug_scm.stopping import check_rule

TRAINER_FILE = "scm_trainer.json"
TOKENIZER_DIR = "tokenizer"


def save_checkpoint(
    path: str | os.PathLike[str], model: SCMModel, tokenizer: Any, settings: dict[str, Any]
) -> Path:
    """Write `model` (backbone in Hugging Face format + heads), `tokenizer` and `settings`
    (JSON) under the folder `path`."""
    path = Path(check_type(path, "path", (str, os.PathLike), what="a folder path"))
    check_type(model, "model", SCMModel)
    if not callable(getattr(tokenizer, "save_pretrained", None)):
        raise TypeError(
            f"tokenizer must be a Hugging Face tokenizer, got {type(tokenizer).__name__}"
        )
    check_type(settings, "settings", dict, what="a dict of the trainer's settings")
    try:
        check_rule(settings.get("theta", 0.5), settings.get("k", 1), settings.get("window"))
        text = json.dumps(settings, indent=1, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"settings: {exc}") from exc
    model.save_pretrained(path)
    tokenizer.save_pretrained(path / TOKENIZER_DIR)
    (path / TRAINER_FILE).write_text(text)
    return path


def load_checkpoint(
    path: str | os.PathLike[str], *, device: Any = None
) -> tuple[SCMModel, Any, dict[str, Any]]:
    """(model in eval mode on `device`, tokenizer, settings) from a `save_checkpoint` folder."""
    from transformers import AutoTokenizer

    path = Path(check_type(path, "path", (str, os.PathLike), what="a folder path"))
    if device is not None:
        check_device(device)
    if not (path / TRAINER_FILE).is_file():
        raise FileNotFoundError(f"{path} is not an SCM checkpoint (no {TRAINER_FILE})")
    settings = json.loads((path / TRAINER_FILE).read_text())
    model = SCMModel.from_pretrained(path, device=device)
    return model, AutoTokenizer.from_pretrained(path / TOKENIZER_DIR), settings
