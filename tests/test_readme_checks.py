"""The top README's "Checking arguments, and the bad-input battery" section as written: its
trainer prints what the README shows, its contract test passes under pytest, and the same
trainer with its checks taken out fails the battery with the messages the README quotes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from paperplug.testing import output_mismatch

ROOT = Path(__file__).resolve().parents[1]
SECTION = "### Checking arguments, and the bad-input battery"


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start)
    return text[start:end]


def _blocks() -> tuple[str, str, str]:
    """(the trainer's block, its shown output, the contract test's block)."""
    section = _section()
    python = re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S)
    shown = re.findall(r"^```text\n(.*?)^```", section, flags=re.M | re.S)
    assert len(python) == 2 and len(shown) == 1
    return python[0], shown[0], python[1]


def _pytest(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_plugin.py").write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "paperplug.testing", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PAPERPLUG_STRICT_PLUGINS": "0"},
    )  # fmt: skip


def test_the_trainer_prints_what_the_readme_shows(tmp_path):
    trainer, shown, _ = _blocks()
    run = subprocess.run(
        [sys.executable, "-c", trainer], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    assert output_mismatch(shown, run.stdout) is None, run.stdout


def test_the_contract_passes_for_the_checked_trainer(tmp_path):
    trainer, _, test = _blocks()
    run = _pytest(tmp_path, f"{trainer}\n{test}")
    assert run.returncode == 0, run.stdout[-3000:]
    assert "passed" in run.stdout and "failed" not in run.stdout


def test_without_its_checks_the_trainer_fails_as_the_readme_says(tmp_path):
    trainer, _, test = _blocks()
    unchecked = trainer.replace('        check_is_fitted(self, "centroids_")\n', "").replace(
        '        X = check_array(X, "X", shape=(None, self.centroids_.shape[1]))\n',
        "        X = np.asarray(X, dtype=float)\n",
    )
    assert unchecked != trainer
    run = _pytest(tmp_path, f"{unchecked}\n{test}")
    assert run.returncode == 1
    quoted = re.findall(r"`((?:predict:)?X:\w+: [^`]*?)(?:\.\.\.)?`", _section())
    assert len(quoted) == 2
    for line in quoted:
        assert line in run.stdout, (line, run.stdout[-3000:])
