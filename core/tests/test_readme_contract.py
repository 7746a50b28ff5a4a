"""ReadmeContract runs a README's python blocks in order, in one namespace, in a scratch folder."""

import os

import pytest

from paperplug.testing import ReadmeContract

README = """# demo
```bash
echo not python
```
```python
x = 2
open("made.txt", "w").write("saved")
```
text between
```python
y = x * 21
```
"""


def _contract(tmp_path, text, blocks=None):
    path = tmp_path / "README.md"
    path.write_text(text)

    class Case(ReadmeContract):
        readme = path

    Case.blocks = blocks
    return Case()


def test_blocks_share_one_namespace_in_order(tmp_path, monkeypatch):
    work = tmp_path / "scratch"
    work.mkdir()
    monkeypatch.chdir(work)
    namespace = _contract(tmp_path, README, blocks=2).run_readme()
    assert namespace["y"] == 42 and (work / "made.txt").read_text() == "saved"


def test_the_count_of_blocks_is_pinned(tmp_path):
    with pytest.raises(AssertionError, match="2 python blocks, expected 3"):
        _contract(tmp_path, README, blocks=3).run_readme()


def test_a_readme_without_code_fails(tmp_path):
    with pytest.raises(AssertionError, match="no ```python block"):
        _contract(tmp_path, "# nothing to run\n").run_readme()


def test_a_failing_block_fails_and_names_its_place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ZeroDivisionError) as info:
        _contract(tmp_path, README.replace("x * 21", "x / 0")).run_readme()
    assert any("block 2" in str(frame.path) for frame in info.traceback)


def test_the_contract_test_runs_in_a_scratch_folder(tmp_path, monkeypatch):
    here = os.getcwd()
    contract = _contract(tmp_path, README, blocks=2)
    scratch = tmp_path / "t"
    scratch.mkdir()
    contract.test_readme_runs_as_written(scratch, monkeypatch)
    assert (scratch / "made.txt").is_file() and not os.path.exists(os.path.join(here, "made.txt"))
