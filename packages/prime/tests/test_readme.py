"""The README's code runs as written and prints what the README shows
(`paperplug.testing.ReadmeContract`): the usage example and the bound on the issue's example."""

from pathlib import Path

from paperplug.testing import ReadmeContract


class TestReadme(ReadmeContract):
    readme = Path(__file__).parents[1] / "README.md"
    blocks = 2
    outputs = 2
    rtol = 2e-3  # a last digit may move with the platform's float arithmetic
