"""The README's code runs as written (`paperplug.testing.ReadmeContract`) and prints what the
README says it prints."""

from pathlib import Path

from paperplug.testing import ReadmeContract


class TestReadme(ReadmeContract):
    readme = Path(__file__).parents[1] / "README.md"
    blocks = 2

    def test_readme_runs_as_written(self, tmp_path, monkeypatch, capsys):
        monkeypatch.chdir(tmp_path)
        self.run_readme()
        printed = capsys.readouterr().out.splitlines()
        assert printed == ["1.0 0.0 16", "removed 16 rows with collapsed image attention"]
