"""The README's code runs as written and prints what the README shows
(`paperplug.testing.ReadmeContract`): clusters found and the decision, the Flower pieces on
the in-process grid, the Flower App project. Its first example promises decisions far from
their thresholds: it must not warn."""

import warnings
from pathlib import Path

from paperplug.testing import ReadmeContract, global_rngs_seeded, readme_examples

README = Path(__file__).parents[1] / "README.md"


class TestReadme(ReadmeContract):
    readme = README
    blocks = 3
    outputs = 3
    rtol = 1e-3  # a last digit may move with the platform's float arithmetic


def test_the_first_example_takes_no_close_decision(capsys):
    """The README says "far from its threshold: no warning"; neither decision may warn."""
    code, _ = readme_examples(README)[0]
    with warnings.catch_warnings(record=True) as caught, global_rngs_seeded(0):
        warnings.simplefilter("always")
        exec(compile(code, "README block 1", "exec"), {"__name__": "__readme__"})
    close = [str(w.message) for w in caught if "the decision was close" in str(w.message)]
    assert close == []
    assert "3 clusters" in capsys.readouterr().out
