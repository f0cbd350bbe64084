"""Settings: documented once in the README and once in storage/_settings.py, each one wired.

The settings tables are the contract. A variable in either table needs a test, anywhere under
tests/, marked ``@pytest.mark.setting("WB_...")``, that shows it changes behaviour (the GUI's
are in tests/app/test_settings_gui.py). So a documented setting that nothing reads, or a new
one added to the docs without a test, fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import storage._settings
from storage import SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def readme_settings() -> set[str]:
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(WB_[A-Z0-9_]+)` \|", section, flags=re.MULTILINE))


def module_settings() -> set[str]:
    doc = storage._settings.__doc__ or ""
    return set(re.findall(r"^\| (WB_[A-Z0-9_]+)\s*\|", doc, flags=re.MULTILINE))


def _setting_marks(decorator: ast.expr) -> list[str]:
    """``WB_X`` of a ``@pytest.mark.setting("WB_X")`` decorator, else nothing."""
    if (
        isinstance(decorator, ast.Call)
        and isinstance(decorator.func, ast.Attribute)
        and decorator.func.attr == "setting"
        and ast.unparse(decorator.func.value) == "pytest.mark"
    ):
        return [a.value for a in decorator.args if isinstance(a, ast.Constant)]
    return []


def behaviour_tests() -> dict[str, list[str]]:
    """Setting name -> the tests marked as showing its behaviour (file::function)."""
    found: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for decorator in node.decorator_list:
                    for name in _setting_marks(decorator):
                        where = f"{path.relative_to(ROOT)}::{node.name}"
                        found.setdefault(name, []).append(where)
    return found


def test_readme_and_settings_module_list_the_same_variables() -> None:
    readme, module = readme_settings(), module_settings()
    assert len(readme) >= 8, readme  # the tables were found at all
    assert readme == module, (
        f"only in README: {sorted(readme - module)}; "
        f"only in storage/_settings.py: {sorted(module - readme)}"
    )


def test_every_documented_setting_has_a_behaviour_test() -> None:
    documented = readme_settings() | module_settings()
    missing = sorted(documented - behaviour_tests().keys())
    assert not missing, (
        f"documented but no test marked @pytest.mark.setting(...) shows what they change: {missing}"
    )


def test_every_behaviour_test_names_a_documented_setting() -> None:
    stale = {k: v for k, v in behaviour_tests().items() if k not in readme_settings()}
    assert not stale, f"tests for settings the README does not document: {stale}"


def test_a_bad_value_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WB_FRAME_STORE_CRF", "60")
    with pytest.raises(SettingsError, match="WB_FRAME_STORE_CRF"):
        load_settings()


def test_the_replaced_jpeg_quality_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # It was documented for a JPEG cache and never read; silently ignoring it would repeat that.
    monkeypatch.setenv("WB_FRAME_STORE_QUALITY", "95")
    with pytest.raises(SettingsError, match=r"WB_FRAME_STORE_QUALITY.*WB_FRAME_STORE_CRF"):
        load_settings()
