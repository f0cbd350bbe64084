"""Export a project's stored demonstrations (all, one scenario's, or chosen ids) to a format.

Demonstrations recorded in different sessions may share a recorder name (``demo_0``), so each
is exported under its episode id, which is unique and leads back to the stored episode.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from sim.teleop._demo import Demonstration
from sim.teleop._demo_io import DemoFileError
from sim.teleop._export_lerobot import export_lerobot
from sim.teleop._export_robomimic import export_robomimic
from sim.teleop._store import list_demonstrations, load_demonstration
from storage import Project

FORMATS = ("lerobot", "robomimic")


def project_demonstrations(
    project: Project, *, scenario: str | None = None, ids: Sequence[str] = ()
) -> list[Demonstration]:
    """The demonstrations asked for, oldest first (the order they were recorded in). ``ids``
    may be unique prefixes of episode ids; an id that is no demonstration is refused."""
    stored = list_demonstrations(project, scenario)
    if ids:
        chosen = [project.episodes.get(i).id for i in ids]  # refuses unknown ids, in words
        known = {ep.id for ep in stored}
        for i, eid in zip(ids, chosen, strict=True):
            if eid not in known:
                where = f" of scenario {scenario}" if scenario else ""
                raise DemoFileError(f"episode {i}: not a stored demonstration{where}")
    else:
        chosen = [ep.id for ep in reversed(stored)]
    if not chosen:
        where = f" of scenario {scenario}" if scenario else ""
        raise DemoFileError(f"{project.root}: no demonstrations{where} to export")
    return [dataclasses.replace(load_demonstration(project, e), name=e) for e in chosen]


def export_demonstrations(
    project: Project,
    fmt: str,
    out: Path,
    *,
    scenario: str | None = None,
    ids: Sequence[str] = (),
) -> tuple[Path, int]:
    """Write the chosen demonstrations as ``fmt`` (``lerobot``: a dataset folder;
    ``robomimic``: one HDF5 file) at ``out``; returns the path written and how many."""
    if fmt not in FORMATS:
        raise DemoFileError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    demos = project_demonstrations(project, scenario=scenario, ids=ids)
    path = export_lerobot(demos, out) if fmt == "lerobot" else export_robomimic(demos, out)
    return path, len(demos)
