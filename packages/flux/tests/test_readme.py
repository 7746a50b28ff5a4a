"""The README's code runs as written and prints what the README shows
(`paperplug.testing.ReadmeContract`): clusters found and the decision, the Flower pieces on
the in-process grid, the Flower App project."""

from pathlib import Path

from paperplug.testing import ReadmeContract


class TestReadme(ReadmeContract):
    readme = Path(__file__).parents[1] / "README.md"
    blocks = 3
    outputs = 3
    rtol = 1e-3  # a last digit may move with the platform's float arithmetic
