"""Every python block of the README runs as written, in order, in one namespace."""

from pathlib import Path

import pytest

from paperplug.testing import readme_python_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_code_runs_as_written():
    pytest.importorskip("transformers")
    blocks = readme_python_blocks(README)
    assert len(blocks) == 3
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
