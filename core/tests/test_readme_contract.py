"""ReadmeContract runs a README's python blocks in order, in one namespace, in a scratch folder."""

import os
import random

import pytest

from paperplug.testing import README_RNG_SEED, ReadmeContract, output_mismatch

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


SHOWN = """# printed
```python
rows = 3
print("rows", rows)
print(f"mean {2 / 3:.3f} took 0.41 s")
```

```text
rows 3
mean 0.667 took ... s
```
```python
print("no output shown")
```
"""


def test_printed_output_is_compared_with_the_block_shown_after_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    contract = _contract(tmp_path, SHOWN, blocks=2)
    contract.outputs = 1
    assert contract.run_readme()["rows"] == 3


def test_a_changed_figure_fails_and_says_which(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        AssertionError, match=r"block 1: printed 0\.667 where the README shows 0\.668"
    ):
        _contract(tmp_path, SHOWN.replace("mean 0.667", "mean 0.668")).run_readme()
    with pytest.raises(
        AssertionError, match=r"(?s)block 1: printed.*but the README shows.*columns 3"
    ):
        _contract(tmp_path, SHOWN.replace("rows 3\n", "columns 3\n")).run_readme()


def test_numbers_within_rtol_match(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    contract = _contract(tmp_path, SHOWN.replace("mean 0.667", "mean 0.668"))
    contract.rtol = 0.01
    assert contract.run_readme()["__name__"] == "__readme__"


def test_the_count_of_shown_outputs_is_pinned(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    contract = _contract(tmp_path, SHOWN)
    contract.outputs = 2
    with pytest.raises(AssertionError, match="1 blocks show output, expected 2"):
        contract.run_readme()


def test_output_mismatch_ellipsis_spans_lines():
    assert output_mismatch("a\n...\nz", "a\nb\nc\nz") is None
    assert output_mismatch("x = 1.50", "x = 1.5") is None  # the same number
    assert output_mismatch("x = 1.5", "x = 1.6") is not None


def _draws_readme() -> str:
    """A README printing one unseeded draw, showing what README_RNG_SEED gives."""
    first = random.Random(README_RNG_SEED).random()
    return f"# draws\n```python\nimport random\n\nprint(random.random())\n```\n\n```text\n{first!r}\n```\n"


def test_blocks_run_from_one_global_random_state_and_leave_the_callers(tmp_path, monkeypatch):
    """Whatever earlier tests drew, the README draws the same; the caller's state comes back."""
    monkeypatch.chdir(tmp_path)
    contract = _contract(tmp_path, _draws_readme())
    for earlier in (1, 2):
        random.seed(earlier)
        before = random.getstate()
        contract.run_readme()
        assert random.getstate() == before
