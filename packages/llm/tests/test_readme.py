"""The README's code runs as written, offline, its blocks in order (later blocks use earlier
names, as a reader would)."""

from pathlib import Path

from paperplug.testing import readme_python_blocks

BLOCKS = readme_python_blocks(Path(__file__).parents[1] / "README.md")


def test_readme_blocks_run_in_order():
    assert BLOCKS
    namespace: dict = {}
    for block in BLOCKS:
        exec(compile(block, "README.md", "exec"), namespace)
