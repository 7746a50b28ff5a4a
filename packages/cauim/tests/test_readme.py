"""The README's code runs as written and prints the figures the README shows
(`paperplug.testing.ReadmeContract`)."""

from pathlib import Path

from paperplug.testing import ReadmeContract


class TestReadme(ReadmeContract):
    readme = Path(__file__).parents[1] / "README.md"
    blocks = 3
    outputs = 3
    rtol = 1e-6  # printed floats, reproduced to the last digit on one machine
