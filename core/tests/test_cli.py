import json

import pytest

from paperplug import hookimpl
from paperplug.cli import main

GOOD = """
from paperplug import hookimpl

@hookimpl
def register_solvers(register):
    register("noop", lambda: None, summary="s", paper="p")
"""


class Plug:
    @hookimpl
    def register_explainers(self, register):
        register("grad", lambda: None, summary="plain gradient", paper="none")


def test_list_json_parses_and_shows_components(paperplug_pm, capsys):
    paperplug_pm.register_plugin(Plug(), name="plug")
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["role"], c["name"], c["plugin"]) for c in data["components"]] == [
        ("explainer", "grad", "plug")
    ]
    assert data["plugins"] == [
        {
            "name": "plug",
            "dist": "",
            "version": "",
            "components": ["explainer:grad"],
            "error": None,
        }
    ]
    assert main(["list", "--role", "solver", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["components"] == []


def test_list_text_and_info(paperplug_pm, capsys):
    paperplug_pm.register_plugin(Plug(), name="plug")
    main(["list"])
    out = capsys.readouterr().out
    assert "grad" in out and "plain gradient" in out
    assert main(["info", "grad"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["name"] == "grad" and doc["components"][0]["summary"] == "plain gradient"
    assert main(["info", "nothing"]) == 1


def test_every_plugin_row_has_the_same_keys(install_dist, monkeypatch, capsys):
    monkeypatch.delenv("PAPERPLUG_STRICT_PLUGINS", raising=False)
    install_dist("bad-plug", "bad", "raise ImportError('needs a missing library')")
    install_dist("good-plug", "good", GOOD)
    with pytest.warns(RuntimeWarning):
        assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["plugins"]
    assert [sorted(r) for r in rows] == [sorted(rows[0])] * 2
    assert [(r["name"], r["error"] is None) for r in rows] == [("bad", False), ("good", True)]


def test_info_of_a_name_with_two_roles_is_one_document(paperplug_pm, capsys):
    class Both:
        @hookimpl
        def register_trainers(self, register):
            register("twin", lambda: None, summary="trains", paper="p")

        @hookimpl
        def register_defenses(self, register):
            register("twin", lambda: None, summary="guards", paper="p")

    paperplug_pm.register_plugin(Both(), name="both")
    assert main(["info", "twin"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(c["role"], c["summary"]) for c in doc["components"]] == [
        ("trainer", "trains"),
        ("defense", "guards"),
    ]


def test_info_marks_a_component_that_cannot_be_imported(paperplug_pm, capsys):
    class Broken:
        @hookimpl
        def register_solvers(self, register):
            register("gone", "no_such_module_xyz:Solver", summary="s", paper="p")

    paperplug_pm.register_plugin(Broken(), name="broken")
    assert main(["info", "gone"]) == 1
    entry = json.loads(capsys.readouterr().out)["components"][0]
    assert entry["status"] == "broken" and "no_such_module_xyz" in entry["error"]
    assert "plugin 'broken'" in entry["error"]


def test_available_reads_manifest(tmp_path, monkeypatch, capsys):
    manifest = tmp_path / "plugins.toml"
    manifest.write_text(
        '[plugins.demo_pkg]\ndist = "paperplug-demo-pkg"\nimport = "paperplug_demo_pkg"\n'
        'path = "packages/demo_pkg"\nroles = ["solver"]\ncomponents = ["x"]\n'
        'paper = { title = "T", venue = "NeurIPS 2025", url = "u" }\n'
    )
    monkeypatch.setenv("PAPERPLUG_MANIFEST", str(manifest))
    assert main(["list", "--available", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["available"]
    assert rows == [
        {
            "slug": "demo_pkg",
            "dist": "paperplug-demo-pkg",
            "installed": None,
            "roles": ["solver"],
            "components": ["x"],
            "paper": "T",
        }
    ]


def test_demo_of_missing_package(capsys):
    assert main(["demo", "no-such-method"]) == 2
    assert "install paperplug-no-such-method" in capsys.readouterr().err


def _demo_package(site, slug: str, body: str, extras: str = "Provides-Extra: demo\n") -> None:
    package = site / f"paperplug_{slug}"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "demo.py").write_text(body)
    info = site / f"paperplug_{slug}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: paperplug-{slug}\nVersion: 0.1\n{extras}"
    )


def test_demo_whose_dependency_is_missing_names_the_demo_extra(site, capsys):
    _demo_package(
        site, "lacks", "import a_module_nobody_installed_xyz\n\ndef main(argv):\n    return 0\n"
    )
    assert main(["demo", "lacks"]) == 2
    err = capsys.readouterr().err
    assert "needs 'a_module_nobody_installed_xyz'" in err
    assert "pip install 'paperplug-lacks[demo]'" in err


def test_demo_behind_requires_extra_repeats_its_message(site, capsys):
    body = (
        "from paperplug.extras import requires_extra\n\n"
        "def main(argv):\n"
        "    with requires_extra('paperplug-hfdemo', 'hf', 'the local model'):\n"
        "        import another_missing_module_xyz\n"
    )
    _demo_package(site, "hfdemo", body)
    assert main(["demo", "hfdemo"]) == 2
    err = capsys.readouterr().err
    assert "paperplug demo hfdemo: the local model needs 'another_missing_module_xyz'" in err
    assert "pip install 'paperplug-hfdemo[hf]'" in err


def test_demo_checks_its_extra_before_running(site, capsys):
    extras = (
        "Provides-Extra: agents\nProvides-Extra: demo\n"
        'Requires-Dist: pluggy; extra == "demo"\n'
        'Requires-Dist: paperplug-early[agents]; extra == "demo"\n'
        'Requires-Dist: a-peer-nobody-installed>=1; extra == "agents"\n'
    )
    _demo_package(site, "early", "raise SystemExit('the demo must not start')\n", extras)
    assert main(["demo", "early"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "paperplug demo early needs a-peer-nobody-installed: pip install 'paperplug-early[demo]'"
    )
