"""Fixtures for worker tests: a fresh project, and job kinds registered for one test only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from storage import JOB_KINDS, JobFunction, Project, register


@pytest.fixture
def project_root(tmp_path: Path) -> Path:
    """An empty project's folder."""
    Project.create(tmp_path / "project").close()
    return tmp_path / "project"


@pytest.fixture
def test_kind() -> Iterator[Callable[[str, JobFunction], None]]:
    """``test_kind(name, fn)`` registers a job kind, unregistered when the test ends."""
    names: list[str] = []

    def add(name: str, fn: JobFunction) -> None:
        register(name)(fn)
        names.append(name)

    yield add
    for name in names:
        JOB_KINDS.pop(name, None)
