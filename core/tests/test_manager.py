import sys
import warnings

import pytest

import paperplug
from paperplug import PluginError, PluginManager, hookimpl

IMPL = """
class Echo:
    stage = "input"
    def __init__(self, word="hi"):
        self.word = word
    def check(self, payload, context=None):
        from paperplug import Verdict
        return Verdict(payload, True)
"""

GOOD = """
from paperplug import hookimpl

@hookimpl
def register_defenses(register):
    register("echo", "{module}_impl:Echo", summary="echoes", paper="none")
"""

BROKEN = """
raise ImportError("this plugin needs a missing library")
"""


def test_entry_point_plugin_is_listed_and_loads(install_dist):
    install_dist("good-plug", "good", GOOD.format(module="good_plug"), impl=IMPL)
    manager = PluginManager()
    comp = manager.get("defense", "echo")
    assert (comp.plugin, comp.summary) == ("good", "echoes")
    assert manager.dists["good"] == ("good-plug", "1.0")
    assert "good_plug_impl" not in sys.modules, "listing must not import the factory's module"
    instance = manager.load("defense", "echo", word="yo")
    assert instance.word == "yo"


def test_broken_plugin_is_listed_as_failed_and_others_still_load(install_dist, monkeypatch):
    monkeypatch.delenv("PAPERPLUG_STRICT_PLUGINS", raising=False)
    install_dist("good-plug", "good", GOOD.format(module="good_plug"), impl=IMPL)
    install_dist("bad-plug", "bad", BROKEN)
    manager = PluginManager()
    with pytest.warns(RuntimeWarning, match="bad"):
        names = [c.name for c in manager.list_components()]
    assert names == ["echo"]
    assert "missing library" in manager.failed["bad"]
    assert {
        "name": "bad",
        "dist": "bad-plug",
        "version": "1.0",
        "components": [],
        "error": manager.failed["bad"],
    } in (manager.plugins())


def test_strict_mode_reraises(install_dist, monkeypatch):
    install_dist("bad-plug", "bad", BROKEN)
    monkeypatch.setenv("PAPERPLUG_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="bad"):
        PluginManager().list_components()


def test_load_and_disable_env_controls(install_dist, monkeypatch):
    install_dist("good-plug", "good", GOOD.format(module="good_plug"), impl=IMPL)
    install_dist("bad-plug", "bad", BROKEN)
    monkeypatch.setenv("PAPERPLUG_LOAD_PLUGINS", "good")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # bad is not even imported
        assert [c.name for c in PluginManager().list_components()] == ["echo"]
    monkeypatch.setenv("PAPERPLUG_LOAD_PLUGINS", "")
    assert PluginManager().list_components() == []
    monkeypatch.delenv("PAPERPLUG_LOAD_PLUGINS")
    monkeypatch.setenv("PAPERPLUG_DISABLE_PLUGINS", "good,bad")
    manager = PluginManager()
    assert manager.list_components() == [] and manager.failed == {}


def test_duplicate_names_rejected_naming_both_plugins(install_dist, monkeypatch):
    install_dist("good-plug", "good", GOOD.format(module="good_plug"), impl=IMPL)
    manager = PluginManager()

    class Clash:
        @hookimpl
        def register_defenses(self, register):
            register("echo", lambda: None, summary="", paper="")

    with pytest.raises(paperplug.DuplicateComponentError, match=r"'good'.*'clash'"):
        manager.register_plugin(Clash(), name="clash")
    assert not manager.pm.has_plugin("clash")
    assert manager.get("defense", "echo").plugin == "good"


def test_duplicate_entry_point_is_isolated(install_dist, monkeypatch):
    monkeypatch.delenv("PAPERPLUG_STRICT_PLUGINS", raising=False)
    install_dist("good-plug", "good", GOOD.format(module="good_plug"), impl=IMPL)
    install_dist("twin-plug", "twin", GOOD.format(module="twin_plug"), impl=IMPL)
    manager = PluginManager()
    with pytest.warns(RuntimeWarning, match="registered twice"):
        comps = manager.list_components()
    assert [(c.name, c.plugin) for c in comps] == [("echo", "good")]
    assert "DuplicateComponentError" in manager.failed["twin"]


def test_run_time_registration_and_unregistration(paperplug_pm):
    class Mine:
        @hookimpl
        def register_solvers(self, register):
            register("argmin", Argmin, summary="smallest item", paper="none", tags=("toy",))

    class Argmin:
        def solve(self, problem, *, seed=None):
            i = min(range(len(problem)), key=problem.__getitem__)
            return paperplug.Solution(i, problem[i])

    paperplug.register_plugin(Mine(), name="mine")
    assert [c.name for c in paperplug.list_components("solver")] == ["argmin"]
    assert paperplug.load("solver", "argmin").solve([3, 1, 2]).value == 1
    paperplug.unregister_plugin("mine")
    assert paperplug.list_components() == []
    with pytest.raises(ValueError, match="no solver named 'argmin'"):
        paperplug.load("solver", "argmin")
    with pytest.raises(ValueError, match="no plugin named 'mine'"):
        paperplug.unregister_plugin("mine")


def test_component_decorator(paperplug_pm):
    @paperplug.register_component("attack", "noop", summary="does nothing", paper="none")
    class Noop:
        stage = "input"

        def run(self, target, inputs, *, budget=None):
            return paperplug.AttackResult(inputs, False)

    comp = paperplug_pm.get("attack", "noop")
    assert comp.factory is Noop and comp.plugin == "attack:noop"
    assert isinstance(paperplug.load("attack", "noop"), Noop)


def test_load_checks_role_methods(paperplug_pm):
    paperplug.register_component("explainer", "wrong", summary="s", paper="p")(lambda: object())
    with pytest.raises(TypeError, match=r"lacks \['explain'\]"):
        paperplug.load("explainer", "wrong")
    paperplug.register_component("defense", "stageless", summary="s", paper="p")(
        lambda: type("D", (), {"stage": "nowhere", "check": lambda self, p, c=None: None})()
    )
    with pytest.raises(TypeError, match="has 'nowhere'"):
        paperplug.load("defense", "stageless")


def test_bad_registration_arguments(paperplug_pm):
    class Bad:
        @hookimpl
        def register_trainers(self, register):
            register("x", 42)

    with pytest.raises(TypeError, match="callable or 'module:attr'"):
        paperplug.register_plugin(Bad(), name="bad")
    with pytest.raises(ValueError, match="unknown role 'judge'"):
        paperplug.list_components("judge")


def test_plugin_with_hook_without_spec_is_rejected(paperplug_pm):
    class Typo:
        @hookimpl
        def register_defences(self, register):  # British spelling: no such hook
            pass

    with pytest.raises(Exception, match="register_defences"):
        paperplug.register_plugin(Typo(), name="typo")
    assert not paperplug_pm.pm.has_plugin("typo")


def test_plugins_dir(tmp_path, monkeypatch):
    # a factory path into the local file itself resolves: the file is importable by name
    source = IMPL + GOOD.format(module="x").replace(
        "x_impl:Echo", "paperplug_local_local_rules:Echo"
    )
    (tmp_path / "local_rules.py").write_text(source)
    monkeypatch.setenv("PAPERPLUG_PLUGINS_DIR", str(tmp_path))
    manager = PluginManager()
    assert manager.get("defense", "echo").plugin == "local:local_rules"
    assert manager.load("defense", "echo").check("x").valid


def test_core_import_is_light():
    import subprocess

    code = "import sys, paperplug; print([m for m in ('torch','transformers','numpy') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_rerunning_a_decorated_definition_replaces_it(paperplug_pm):
    for answer in (1, 2):  # a notebook cell run twice

        @paperplug.register_component("solver", "cell", summary="s", paper="p")
        class Cell:
            def solve(self, problem, *, seed=None, answer=answer):
                return paperplug.Solution(answer)

    assert paperplug.load("solver", "cell").solve(None).value == 2
    assert [c.name for c in paperplug.list_components("solver")] == ["cell"]


def test_decorator_cannot_take_a_name_another_plugin_registered(paperplug_pm):
    class Installed:
        @hookimpl
        def register_solvers(self, register):
            register("taken", lambda: None, summary="s", paper="p")

    paperplug.register_plugin(Installed(), name="installed")
    with pytest.raises(paperplug.DuplicateComponentError, match="'installed'"):
        paperplug.register_component("solver", "taken")(lambda: None)
    assert paperplug_pm.get("solver", "taken").plugin == "installed"


def test_registering_a_plugin_name_twice_is_a_clear_error(paperplug_pm):
    class A:
        @hookimpl
        def register_solvers(self, register):
            register("a", lambda: None)

    paperplug.register_plugin(A(), name="mine")
    with pytest.raises(PluginError, match="already registered; unregister_plugin"):
        paperplug.register_plugin(A(), name="mine")


def test_unimportable_factory_names_component_plugin_and_cause(paperplug_pm):
    class Broken:
        @hookimpl
        def register_explainers(self, register):
            register("missing-module", "no_such_module_xyz:Thing")
            register("missing-attr", "json:NoSuchThing")
            register("raises", "paperplug_raises_on_import_xyz:Thing")

    paperplug.register_plugin(Broken(), name="broken")
    with pytest.raises(paperplug.ComponentImportError) as info:
        paperplug.load("explainer", "missing-module")
    assert "'missing-module'" in str(info.value) and "'broken'" in str(info.value)
    assert "No module named 'no_such_module_xyz'" in str(info.value)
    with pytest.raises(paperplug.ComponentImportError, match="NoSuchThing"):
        paperplug.load("explainer", "missing-attr")


def test_first_loads_from_many_threads_all_succeed(install_dist):
    from concurrent.futures import ThreadPoolExecutor

    slow = GOOD.format(module="slow_plug").replace(
        "from paperplug import hookimpl",
        "import time\nfrom paperplug import hookimpl\ntime.sleep(0.2)",
    )
    install_dist("slow-plug", "slow", slow, impl=IMPL)
    previous = paperplug.manager.set_manager(None)
    try:
        with ThreadPoolExecutor(8) as pool:
            found = list(
                pool.map(lambda _: type(paperplug.load("defense", "echo")).__name__, range(8))
            )
    finally:
        paperplug.manager.set_manager(previous)
    assert found == ["Echo"] * 8


def test_attack_contract_needs_a_stage(paperplug_pm):
    paperplug.register_component("attack", "stageless", summary="s", paper="p")(
        lambda: type("A", (), {"run": lambda self, t, i, budget=None: None})()
    )
    with pytest.raises(TypeError, match="lacks \\['stage'\\]"):
        paperplug.load("attack", "stageless")
