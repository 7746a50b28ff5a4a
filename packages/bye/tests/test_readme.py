"""The README's code runs as written: its python blocks, in order, continue one another."""

from pathlib import Path

from paperplug.testing import readme_python_blocks

BLOCKS = readme_python_blocks(Path(__file__).parents[1] / "README.md")


def test_readme_blocks_run_in_order(capsys):
    assert len(BLOCKS) == 2
    namespace: dict = {}
    for block in BLOCKS:
        exec(compile(block, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["1.0 0.0 16", "removed 16 rows with collapsed image attention"]
