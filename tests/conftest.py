"""Shared fixtures: isolated settings and small generated case folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.casefactory import make_case


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own config dir and rater, never the user's."""
    monkeypatch.setenv("WB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("WB_RATER", "tester")


@pytest.fixture(scope="session")
def cases_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with two valid case folders (read-only for tests: copy before changing)."""
    root = tmp_path_factory.mktemp("cases")
    make_case(root, "stack_blocks", n_videos=2)
    make_case(root, "tidy_cups", n_videos=1, goal="Put the green cup in the box.")
    return root
