"""SCM checkpoints on disk: the model, its tokenizer and the trainer's settings (θ and k
chosen on validation among them). The trainer writes them; the monitor reads them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from paperplug.checks import check_type
from paperplug_scm.model import SCMModel

TRAINER_FILE = "scm_trainer.json"
TOKENIZER_DIR = "tokenizer"


def save_checkpoint(
    path: str | os.PathLike[str], model: SCMModel, tokenizer: Any, settings: dict[str, Any]
) -> Path:
    """Write `model` (backbone in Hugging Face format + heads), `tokenizer` and `settings`
    (JSON) under the folder `path`."""
    path = Path(check_type(path, "path", (str, os.PathLike), what="a folder path"))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path / TOKENIZER_DIR)
    (path / TRAINER_FILE).write_text(json.dumps(settings, indent=1))
    return path


def load_checkpoint(
    path: str | os.PathLike[str], *, device: Any = None
) -> tuple[SCMModel, Any, dict[str, Any]]:
    """(model in eval mode on `device`, tokenizer, settings) from a `save_checkpoint` folder."""
    from transformers import AutoTokenizer

    path = Path(check_type(path, "path", (str, os.PathLike), what="a folder path"))
    if not (path / TRAINER_FILE).is_file():
        raise FileNotFoundError(f"{path} is not an SCM checkpoint (no {TRAINER_FILE})")
    settings = json.loads((path / TRAINER_FILE).read_text())
    model = SCMModel.from_pretrained(path, device=device)
    return model, AutoTokenizer.from_pretrained(path / TOKENIZER_DIR), settings
