"""The base install works without the [agentdojo] extra: `from paperplug_drift import *`,
the README's first example, and a clear error naming the extra for what needs it."""

import pkgutil
import subprocess
import sys
from pathlib import Path

from paperplug.testing import readme_python_blocks

BLOCK_AGENTDOJO = "import sys\nsys.modules['agentdojo'] = None  # as if not installed\n"


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_AGENTDOJO + code], capture_output=True, text=True, timeout=120
    )


def test_star_import_without_agentdojo():
    done = run(
        "from paperplug_drift import *\n"
        "import paperplug_drift\n"
        "print(len(paperplug_drift.__all__), 'agentdojo' in sys.modules and sys.modules['agentdojo'] is not None)\n"
        "try:\n    paperplug_drift.drift_pipeline\nexcept ImportError as exc:\n    print(exc)\n"
    )
    assert done.returncode == 0, done.stderr
    names, error = done.stdout.strip().split("\n")
    assert int(names.split()[0]) >= 30 and names.split()[1] == "False"  # agentdojo never loaded
    assert "paperplug-drift[agentdojo]" in error


def test_the_readme_first_example_runs_without_agentdojo():
    block = readme_python_blocks(Path(__file__).parents[1] / "README.md")[0]
    done = run(block)
    assert done.returncode == 0, done.stderr


def test_no_public_name_is_shadowed_by_a_submodule():
    """Importing a submodule sets it on the package: one named like a public function (the
    old normalize.py) made `paperplug_drift.normalize` a module once the isolator was imported."""
    import paperplug_drift

    modules = {m.name for m in pkgutil.iter_modules(paperplug_drift.__path__)}
    assert not modules & set(paperplug_drift.__all__)
