"""The built installers, as lab IT receives them: ``make package-test`` builds them first.

These tests need ``dist/`` from packaging/build.py, so plain ``pytest`` does not collect them
(tests/conftest.py); ``make package-test`` runs them with WB_PACKAGE_TESTS=1.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("WB_DIST", ROOT / "dist"))
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make package` first")
    return path


@pytest.fixture(scope="session")
def bundle() -> Path:
    """The one-folder bundle's executable."""
    return _need(DIST / "rollout-workbench" / "workbench")


@pytest.fixture(scope="session")
def tarball() -> Path:
    return _need(DIST / f"rollout-workbench-{VERSION}-linux-x86_64.tar.gz")


@pytest.fixture(scope="session")
def deb() -> Path:
    return _need(DIST / f"rollout-workbench_{VERSION}_amd64.deb")


def clean_env(home: Path, path: Path, **extra: str) -> dict[str, str]:
    """An environment with nothing of this machine's Python in it: HOME and the XDG folders
    under ``home``, ``PATH`` just ``path`` (a folder with no python), no PYTHON* variables."""
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PATH": str(path),
        "LANG": "C.UTF-8",
    }
    return env | extra
