"""The README's code runs as written: its blocks in order, in one folder (a later block loads
the checkpoint an earlier one saved)."""

from pathlib import Path

from paperplug.testing import readme_python_blocks

BLOCKS = readme_python_blocks(Path(__file__).parents[1] / "README.md")


def test_readme_blocks_run_in_order(tmp_path, monkeypatch):
    assert BLOCKS
    monkeypatch.chdir(tmp_path)
    for i, block in enumerate(BLOCKS):
        exec(compile(block, f"README.md block {i + 1}", "exec"), {})
