"""The README's code runs as written."""

from pathlib import Path

import pytest

from paperplug.testing import readme_python_blocks

BLOCKS = readme_python_blocks(Path(__file__).parents[1] / "README.md")


@pytest.mark.parametrize("block", BLOCKS)
def test_readme_block_runs(block):
    exec(compile(block, "README.md", "exec"), {})


def test_there_is_code_to_run():
    assert BLOCKS
