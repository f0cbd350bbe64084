"""Export a project's stored demonstrations (all, one scenario's, or chosen ids) to a format.

Demonstrations recorded in different sessions may share a recorder name (``demo_0``), so each
is exported under its episode id, which is unique and leads back to the stored episode.

A LeRobot export always has camera videos, as its label says ("parquet + MP4"): the cameras
asked for (by default the front view and the wrist) are drawn from every step's recorded
MuJoCo state (``_demo_video.StateVideos``), whether or not a camera was recorded. What was
written comes back as an :class:`Exported`, so whoever asked can say where and how much.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sim.teleop._demo import Demonstration
from sim.teleop._demo_io import DemoFileError
from sim.teleop._demo_video import DEFAULT_CAMERAS, DEFAULT_SIZE, StateVideos
from sim.teleop._export_lerobot import VIDEO_PATH, export_lerobot, image_key
from sim.teleop._export_robomimic import export_robomimic
from sim.teleop._store import list_demonstrations, load_demonstration
from storage import Project

FORMATS = ("lerobot", "robomimic")


@dataclass(frozen=True)
class Exported:
    """What an export wrote: ``path`` (the dataset folder or the HDF5 file), how many
    demonstrations and frames, and each camera video file (LeRobot only)."""

    path: Path
    fmt: str
    demonstrations: int
    frames: int
    videos: tuple[Path, ...] = ()

    def describe(self) -> str:
        """One line for a person: what went where."""
        vids = f", {len(self.videos)} camera video(s) (MP4)" if self.videos else ""
        return (
            f"exported {self.demonstrations} demonstration(s) as {self.fmt} to {self.path}: "
            f"{self.frames} frames{vids}"
        )


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
    cameras: Sequence[str] = DEFAULT_CAMERAS,
    size: tuple[int, int] = DEFAULT_SIZE,
) -> Exported:
    """Write the chosen demonstrations as ``fmt`` (``lerobot``: a dataset folder with one MP4
    per camera in ``cameras``, rendered at ``size`` (width, height) from the recorded states;
    ``robomimic``: one HDF5 file) at ``out``; returns what was written."""
    if fmt not in FORMATS:
        raise DemoFileError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    demos = project_demonstrations(project, scenario=scenario, ids=ids)
    if fmt == "robomimic":
        path = export_robomimic(demos, out)
        return Exported(path, fmt, len(demos), sum(d.steps for d in demos))
    if not cameras:
        raise DemoFileError("a LeRobot export needs at least one camera to render")
    with StateVideos(demos, cameras, size, project=project) as videos:
        path = export_lerobot(demos, out, videos=videos)
    info = json.loads((path / "meta/info.json").read_text(encoding="utf-8"))
    files = tuple(
        path / VIDEO_PATH.format(video_key=image_key(c), chunk_index=0, file_index=0)
        for c in videos.cameras
    )
    return Exported(path, fmt, len(demos), int(info["total_frames"]), files)
