"""The README's code runs as written and prints what the README shows
(`paperplug.testing.ReadmeContract`): clusters found and the decision, the Flower pieces on
the in-process grid, the Flower App project; its first example promises decisions far from
their thresholds, so no decision the README takes may warn."""

import warnings
from pathlib import Path

from paperplug.testing import ReadmeContract

README = Path(__file__).parents[1] / "README.md"


class TestReadme(ReadmeContract):
    readme = README
    blocks = 3
    outputs = 3
    rtol = 1e-3  # a last digit may move with the platform's float arithmetic

    def test_readme_runs_as_written(self, tmp_path, monkeypatch):
        """The README says "far from its threshold: no warning"; no decision it takes warns."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            super().test_readme_runs_as_written(tmp_path, monkeypatch)
        close = [str(w.message) for w in caught if "the decision was close" in str(w.message)]
        assert close == []
