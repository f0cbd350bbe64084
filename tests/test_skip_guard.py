"""The CI skip guard: with CI set, a skipped test fails the run unless it is marked live."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """
from tests.skip_guard import install

def pytest_configure(config):
    config.addinivalue_line("markers", "live: needs a model endpoint")
    install(config)
"""

TESTS = """
import pytest

def test_runs():
    pass

@pytest.mark.live
def test_endpoint():
    pytest.skip("no endpoint configured")
"""

SKIPS = """
import pytest

def test_needs_a_tool():
    pytest.skip("the tool is not installed")
"""

MODULE_SKIP = """
import pytest

pytest.skip("nothing here runs without the tool", allow_module_level=True)

def test_hidden():
    pass
"""


def run_pytest(
    folder: Path, files: dict[str, str], ci: str | None
) -> subprocess.CompletedProcess[str]:
    for name, text in {"conftest.py": CONFTEST, **files}.items():
        (folder / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xvfb",
         "-p", "no:randomly", str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_in_ci_a_skip_fails_the_run_and_is_listed(tmp_path: Path) -> None:
    run = run_pytest(tmp_path, {"test_a.py": TESTS, "test_b.py": SKIPS}, ci="true")
    assert run.returncode == 1, run.stdout
    assert "skipped tests fail CI" in run.stdout
    assert "test_b.py::test_needs_a_tool: the tool is not installed" in run.stdout
    assert "test_endpoint" not in run.stdout.split("skipped tests fail CI")[1]


def test_in_ci_a_module_level_skip_fails_the_run(tmp_path: Path) -> None:
    run = run_pytest(tmp_path, {"test_a.py": TESTS, "test_m.py": MODULE_SKIP}, ci="1")
    assert run.returncode == 1, run.stdout
    assert "test_m.py: nothing here runs without the tool" in run.stdout


def test_in_ci_a_live_test_may_skip(tmp_path: Path) -> None:
    run = run_pytest(tmp_path, {"test_a.py": TESTS}, ci="true")
    assert run.returncode == 0, run.stdout
    assert "1 passed, 1 skipped" in run.stdout
    assert "skipped tests fail CI" not in run.stdout


@pytest.mark.parametrize("ci", [None, "", "0", "false", "no"])
def test_outside_ci_skips_are_only_reported(tmp_path: Path, ci: str | None) -> None:
    run = run_pytest(tmp_path, {"test_a.py": TESTS, "test_b.py": SKIPS}, ci=ci)
    assert run.returncode == 0, run.stdout
    assert "1 passed, 2 skipped" in run.stdout
