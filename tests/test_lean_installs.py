"""Use 1 for the methods with no neural network: `pip install paperplug-<slug>` into a fresh
environment from `make dist`'s wheels brings neither torch nor transformers, the method is
listed, its README's first code block runs there, its demo names the extra it needs, and the
install weighs what the README table says (within 25%)."""

from __future__ import annotations

import json
import subprocess
import tomllib

import pytest
from install_size import ROOT, install

from paperplug.manifest import load_manifest
from paperplug.testing import readme_python_blocks

LEAN = ["cauim", "drift", "matroid", "rdx", "semicentroid"]
MANIFEST = load_manifest(ROOT / "plugins.toml")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("lean")


@pytest.mark.parametrize("slug", LEAN)
def test_a_lean_method_installs_alone_and_runs(slug, workdir):
    done = install(slug, workdir)
    assert not {"torch", "transformers"} & set(done.packages), sorted(done.packages)
    ours = {n for n in done.packages if n.startswith("paperplug")}
    assert ours == {"paperplug", f"paperplug-{slug}"} | (
        {"paperplug-llm"} if slug == "drift" else set()
    )
    core = tomllib.loads((ROOT / "core" / "pyproject.toml").read_text())["project"]["version"]
    assert done.packages["paperplug"] == core

    listing = done.run("paperplug", "list", "--json", check=True)
    names = {c["name"] for c in json.loads(listing.stdout)["components"]}
    assert names == set(MANIFEST[slug]["components"])

    block = readme_python_blocks(ROOT / "packages" / slug / "README.md")[0]
    run = done.run("python", "-c", block, cwd=workdir, timeout=300)
    assert run.returncode == 0, f"README block 1 failed in the lean install:\n{run.stderr}"

    demo = done.run("paperplug", "demo", slug, timeout=120)
    assert demo.returncode == 2 and f"pip install 'paperplug-{slug}[demo]'" in demo.stderr, (
        demo.stderr
    )

    stated = MANIFEST[slug]["install"]
    assert len(done.packages) == stated["packages"], sorted(done.packages)
    assert abs(done.mb - stated["mb"]) <= 0.25 * stated["mb"], (done.mb, stated)
    subprocess.run(["rm", "-rf", str(done.venv)], check=True)


def test_every_package_states_its_install_and_the_torch_ones_say_so():
    readme = (ROOT / "README.md").read_text()
    for slug, table in MANIFEST.items():
        assert {"mb", "packages"} <= set(table.get("install", {})), f"{slug}: no install figures"
        row = next(line for line in readme.splitlines() if f"`{table['dist']}`" in line)
        assert f"| {table['install']['mb']} MB, " in row
        assert row.endswith(", torch |") == ("torch" in table["heavy"]), row
