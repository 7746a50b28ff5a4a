import json

from paperplug import hookimpl
from paperplug.cli import main


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
    assert data["failed"] == {}
    assert main(["list", "--role", "solver", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["components"] == []


def test_list_text_and_info(paperplug_pm, capsys):
    paperplug_pm.register_plugin(Plug(), name="plug")
    main(["list"])
    out = capsys.readouterr().out
    assert "grad" in out and "plain gradient" in out
    assert main(["info", "grad"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"] == "plain gradient"
    assert main(["info", "nothing"]) == 1


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
