"""``workbench demo``: a project filled with content our own code generates.

The synthetic renderer writes case folders in the documented import layout; they are imported
exactly as a user's would be, so the demo also exercises the real import path.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from storage import ImportReport, Project, import_cases


def build_demo_project(
    project_dir: Path, *, seed: int = 0, progress: Callable[[str], None] | None = None
) -> ImportReport:
    """Generate the demo cases and import them into ``project_dir`` (created if missing)."""
    from sim.synthetic import write_demo_cases

    with tempfile.TemporaryDirectory(prefix="wb-demo-") as tmp:
        write_demo_cases(Path(tmp), seed=seed, progress=progress)
        with Project.open_or_create(project_dir) as project:
            return import_cases(project, Path(tmp), progress=progress)
