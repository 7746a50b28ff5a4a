"""Every python block of the README runs as written, in order, in one namespace."""

import warnings
from pathlib import Path

import pytest

from paperplug.testing import readme_python_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_code_runs_as_written():
    pytest.importorskip("pandas")
    blocks = readme_python_blocks(README)
    assert len(blocks) == 3
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the third block provokes one on purpose
        for block in blocks:
            exec(compile(block, str(README), "exec"), namespace)
