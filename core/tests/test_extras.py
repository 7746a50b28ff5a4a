"""Optional dependencies: a missing extra's import says what to install; names that need an
extra stay importable by name but out of `import *`."""

from __future__ import annotations

import pytest

from paperplug import lazy_exports
from paperplug.extras import MissingExtraError, requires_extra


def test_a_missing_module_names_the_extra_and_the_command():
    with (
        pytest.raises(MissingExtraError) as info,
        requires_extra("paperplug-x", "hf", "local models"),
    ):
        import a_module_nobody_installed_xyz  # noqa: F401
    message = str(info.value)
    assert message == (
        "local models needs 'a_module_nobody_installed_xyz', which paperplug-x's [hf] extra "
        "installs: pip install 'paperplug-x[hf]'"
    )
    assert info.value.name == "a_module_nobody_installed_xyz"
    assert isinstance(info.value, ImportError)  # `except ImportError` still catches it


def test_an_installed_module_imports_and_nested_blocks_keep_the_innermost_extra():
    with requires_extra("paperplug-x", "demo"):
        import json
    assert json.dumps([1]) == "[1]"
    with (
        pytest.raises(MissingExtraError, match=r"paperplug-x\[hf\]"),
        requires_extra("paperplug-x", "demo"),
        requires_extra("paperplug-x", "hf"),
    ):
        import another_missing_module_xyz  # noqa: F401


def test_lazy_exports_leave_optional_names_out_of_all():
    getattr_, dir_, all_ = lazy_exports("json", {"dumps": ".", "loads": "."}, optional=("loads",))
    assert all_ == ["dumps"] and dir_() == ["dumps", "loads"]
    assert getattr_("loads")("[2]") == [2]  # still importable by name
    with pytest.raises(ValueError, match=r"optional names not in exports: \['nope'\]"):
        lazy_exports("json", {"dumps": "."}, optional=("nope",))
