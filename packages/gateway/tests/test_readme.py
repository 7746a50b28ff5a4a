"""The README's code runs as written and prints what the README shows."""

from pathlib import Path

from paperplug.testing import ReadmeContract


class TestReadme(ReadmeContract):
    readme = Path(__file__).parents[1] / "README.md"
    blocks = 1
    outputs = 1
