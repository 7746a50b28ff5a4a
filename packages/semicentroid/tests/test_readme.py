"""The README's code runs as written (`paperplug.testing.ReadmeContract`)."""

from pathlib import Path

import pytest

from paperplug.testing import ReadmeContract

pytest.importorskip("pandas")  # the README's third block reads a DataFrame (test dependency)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the third block provokes one on purpose
class TestReadme(ReadmeContract):
    readme = Path(__file__).parents[1] / "README.md"
    blocks = 3
