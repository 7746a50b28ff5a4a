"""The README's code runs as written (`paperplug.testing.ReadmeContract`)."""

from pathlib import Path

from paperplug.testing import ReadmeContract


class TestReadme(ReadmeContract):
    readme = Path(__file__).parents[1] / "README.md"
    blocks = 6
    outputs = 2
