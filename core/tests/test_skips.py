"""With PAPERPLUG_NO_SKIP=1 (`make test`), a test skipped for a missing dependency fails; a
skip for hardware (a GPU) stays a skip and is printed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def _pytest(tmp_path, source: str, strict: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_case.py").write_text(textwrap.dedent(source))
    env = {**os.environ, "PAPERPLUG_NO_SKIP": "1" if strict else "0"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "paperplug.testing",
            "-rs",
            "-q",
            "-p",
            "no:cacheprovider",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


MISSING = """
import pytest

def test_cross_check():
    pytest.importorskip("a_peer_library_that_is_not_installed")

def test_on_gpu():
    pytest.skip("needs CUDA")
"""


def test_a_skip_for_a_missing_library_fails_under_no_skip(tmp_path):
    run = _pytest(tmp_path, MISSING, strict=True)
    assert run.returncode == 1, run.stdout
    assert "1 failed, 1 skipped" in run.stdout
    assert "skipped for a reason other than hardware" in run.stdout
    assert "needs CUDA" in run.stdout  # the hardware skip is printed


def test_without_no_skip_both_are_skips(tmp_path):
    run = _pytest(tmp_path, MISSING, strict=False)
    assert run.returncode == 0 and "2 skipped" in run.stdout, run.stdout


def test_a_module_level_skip_fails_under_no_skip(tmp_path):
    run = _pytest(
        tmp_path,
        'import pytest\npytest.importorskip("not_installed_xyz")\n\ndef test_x():\n    assert True\n',
        strict=True,
    )
    assert (
        run.returncode != 0 and "module skipped for a reason other than hardware" in run.stdout
    ), run.stdout
