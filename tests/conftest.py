"""Shared fixtures (isolated settings, small generated case folders) and the CI skip guard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import skip_guard
from tests.casefactory import make_case

# tests/packaging checks the built installers (`make package-test` builds them and sets this);
# a plain run has none to check
collect_ignore = [] if os.environ.get("WB_PACKAGE_TESTS") == "1" else ["packaging"]


def pytest_configure(config: pytest.Config) -> None:
    skip_guard.install(config)  # in CI, any skip but a 'live' test's fails the run


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own config dir, log dir and rater, and none of the user's WB_ values.

    WB_SYNCHRONOUS is kept: it is a debugging switch someone may run the tests with; so are
    the WB_LIVE_* variables, which name the endpoint the opt-in live test calls (they configure
    that test, not the product).
    """
    for name in list(os.environ):
        if name.startswith("WB_") and name != "WB_SYNCHRONOUS" and not name.startswith("WB_LIVE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("WB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("WB_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("WB_RATER", "tester")


@pytest.fixture(scope="session")
def cases_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with two valid case folders (read-only for tests: copy before changing)."""
    root = tmp_path_factory.mktemp("cases")
    make_case(root, "stack_blocks", n_videos=2)
    make_case(root, "tidy_cups", n_videos=1, goal="Put the green cup in the box.")
    return root
