"""What every package's demo and benchmark need, once: the demo's command line, result
tables, mean with a confidence interval, timing, progress bars, figures, one thread.

Torch-free at import: torch, scipy, tqdm and matplotlib are imported inside the functions
that use them, and only where installed.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any


def demo_parser(slug: str, description: str | None = None) -> argparse.ArgumentParser:
    """The demo's parser with the flags every package shares: --out (out/<slug>) and --seed (0)."""
    parser = argparse.ArgumentParser(prog=f"paperplug demo {slug}", description=description)
    parser.add_argument(
        "--out", type=Path, default=Path("out") / slug, help="folder for figures and tables"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    return parser


def single_thread() -> None:
    """One thread for BLAS/OpenMP and torch: on small shared CPUs two threads run slower.

    Sets the thread variables (torch reads OMP_NUM_THREADS when it is imported) and, if torch
    is already imported, its thread count; it never imports torch itself."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, bool) or value is None:
        return str(value) if value is not None else "-"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}" if math.isfinite(value) else str(value)
    return str(value)


def table(rows: Sequence[Sequence[Any]], header: Sequence[str], *, digits: int = 3) -> str:
    """A plain-text table, columns aligned; floats with `digits` decimals, None as "-"."""
    cells = [[str(h) for h in header]] + [[_cell(v, digits) for v in row] for row in rows]
    if any(len(r) != len(header) for r in cells):
        raise ValueError(f"every row needs {len(header)} cells, like the header")
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> tuple[float, float]:
    """(mean, half-width of the confidence interval of the mean): Student's t from scipy where
    installed, else the normal quantile. One value gives a half-width of nan."""
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("mean_ci needs at least one value")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    n = len(xs)
    mean = sum(xs) / n
    if n == 1:
        return mean, math.nan
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    try:
        from scipy import stats

        q = float(stats.t.ppf(0.5 + confidence / 2, n - 1))
    except ImportError:
        from statistics import NormalDist

        q = NormalDist().inv_cdf(0.5 + confidence / 2)
    return mean, q * sd / math.sqrt(n)


def fmt_ci(values: Iterable[float], digits: int = 3, confidence: float = 0.95) -> str:
    """ "mean ± half-width" of `values` (see mean_ci)."""
    mean, half = mean_ci(values, confidence)
    return f"{mean:.{digits}f}" if math.isnan(half) else f"{mean:.{digits}f} ± {half:.{digits}f}"


class Timer:
    """`with Timer() as t: ...` then `t.seconds` (wall time) and `t.cpu_seconds` (this
    process's CPU time: comparable between runs on a busy shared machine)."""

    def __enter__(self) -> Timer:
        self.start, self.cpu_start = time.perf_counter(), time.process_time()
        self.seconds = self.cpu_seconds = math.nan
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
        self.cpu_seconds = time.process_time() - self.cpu_start


def best_of(fn: Callable[[], Any], repeat: int = 3) -> tuple[Any, float]:
    """(fn's result, its best wall time in seconds over `repeat` runs): on a shared machine
    the minimum is the least noisy estimate of the cost."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def peak_memory_mb() -> float:
    """This process's peak resident memory so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def progress(
    iterable: Iterable[Any], desc: str, *, total: int | None = None, **kw: Any
) -> Iterator[Any]:
    """A tqdm progress bar over `iterable` (on stderr), or the plain iterable where tqdm is
    missing. Disabled when PAPERPLUG_PROGRESS=0 (tests)."""
    if os.environ.get("PAPERPLUG_PROGRESS", "1") in ("0", "false", "no"):
        yield from iterable
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield from iterable
        return
    kw.setdefault("leave", False)
    yield from tqdm(iterable, desc=desc, total=total, **kw)


def pyplot() -> Any:
    """matplotlib.pyplot on the file-only Agg backend (no screen needed). Figures belong to the
    demos: without matplotlib, the error says to install a package's [demo] extra."""
    try:
        import matplotlib
    except ModuleNotFoundError as exc:
        from paperplug.extras import MissingExtraError

        raise MissingExtraError(
            "figures need matplotlib: pip install matplotlib (a paperplug package's [demo] "
            "extra brings it)",
            name="matplotlib",
        ) from exc

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | os.PathLike[str], *, dpi: int = 120) -> Path:
    """Save a matplotlib figure (creating the folder), close it, print and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    pyplot().close(fig)
    print(f"figure saved to {path}", flush=True)
    return path
