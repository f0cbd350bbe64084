"""``workbench demo``: a project filled with content our own code generates.

Two sources, both written as case folders in the documented import layout and imported exactly
as a user's would be (so the demo also exercises the real import path):

- the synthetic 2-D renderer (``sim.synthetic``): generated-looking rollouts with known defects,
  human-success and human-failure recordings;
- MuJoCo (``sim.episode._demo``): the scripted arm's rollouts of shipped scenarios, clean and
  with injected anomalies, each also stored as an episode with its trace and video.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from storage import ImportReport, Project, import_cases


def build_demo_project(
    project_dir: Path,
    *,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    simulate: bool = True,
) -> ImportReport:
    """Generate the demo cases (and episodes) into ``project_dir`` (created if missing).

    With ``simulate`` the MuJoCo episodes need a working OpenGL platform: that is checked
    first, so a machine that cannot render gets :class:`~sim.gl.RenderUnavailableError`
    before anything is written (no half-built project).
    """
    if simulate:
        from sim.gl import require_rendering

        require_rendering()
    from sim.episode import write_sim_cases
    from sim.synthetic import write_demo_cases

    with tempfile.TemporaryDirectory(prefix="wb-demo-") as tmp:
        write_demo_cases(Path(tmp), seed=seed, progress=progress)
        with Project.open_or_create(project_dir) as project:
            if simulate and not project.episodes.list():
                write_sim_cases(project, Path(tmp), progress=progress)
            return import_cases(project, Path(tmp), progress=progress)
