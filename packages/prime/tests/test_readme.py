"""The README's code runs as written (in a scratch folder: it saves a checkpoint)."""

from pathlib import Path

import pytest

from paperplug.testing import readme_python_blocks

BLOCKS = readme_python_blocks(Path(__file__).parents[1] / "README.md")


@pytest.mark.parametrize("block", BLOCKS)
def test_readme_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})


def test_there_is_code_to_run():
    assert BLOCKS
