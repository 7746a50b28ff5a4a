"""The README's code runs as written: its blocks in order, in one folder (a later block uses
the model an earlier one saved)."""

from pathlib import Path

from paperplug.testing import readme_python_blocks

BLOCKS = readme_python_blocks(Path(__file__).parents[1] / "README.md")


def test_readme_blocks_run_in_order(tmp_path, monkeypatch):
    assert len(BLOCKS) == 3
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for i, block in enumerate(BLOCKS):
        exec(compile(block, f"README.md block {i + 1}", "exec"), namespace)
