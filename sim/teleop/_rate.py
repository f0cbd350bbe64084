"""Send demonstrations to the rubric: their camera video becomes a case video raters score.

A demonstration is a person's attempt at a scenario, so its video goes in as a human video of
a case for that scenario (``human-success`` or ``human-failure`` by the contract's outcome),
through the same case-folder import as any other video: the import's checks (and its
idempotence: sending a demonstration twice adds nothing) are the core's, not repeated here.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from sim.episode import open_scenario
from sim.teleop._demo_io import DemoFileError
from sim.teleop._store import list_demonstrations, load_demonstration
from storage import ImportReport, Project, import_cases

DOMAINS = {"kitchen": "kitchen_food_prep", "tidy": "household_org_storage",
           "stack": "household_org_storage"}  # fmt: skip


def rate_demonstrations(
    project: Project, ids: Sequence[str] = (), *, camera: str = "front"
) -> ImportReport:
    """Import the ``camera`` video of each chosen demonstration (all when ``ids`` is empty)
    as a human video of the case ``demo-<scenario>``; returns the import's report."""
    chosen = [project.episodes.get(i) for i in ids] or list_demonstrations(project)
    if not chosen:
        raise DemoFileError(f"{project.root}: no demonstrations to rate")
    cases: dict[str, list[tuple[str, Path, bool]]] = {}
    for ep in chosen:
        if not ep.config.get("teleop"):
            raise DemoFileError(f"episode {ep.id[:8]}: not a demonstration")
        video = next((a for a in project.episodes.artifacts(ep.id)
                      if a.kind == "video" and a.camera == camera), None)  # fmt: skip
        if video is None:
            have = ", ".join(ep.config.get("cameras") or []) or "none"
            raise DemoFileError(
                f"episode {ep.id[:8]}: no {camera!r} video was recorded (cameras: {have}); "
                "record with that camera to rate it"
            )
        ok = bool(ep.config.get("success"))
        cases.setdefault(ep.scenario, []).append((ep.id, project.media_path(video.media_sha), ok))
    with tempfile.TemporaryDirectory(prefix="wb-rate-") as tmp:
        for scenario, videos in cases.items():
            _case_folder(project, Path(tmp), scenario, videos, camera)
        return import_cases(project, Path(tmp))


def _case_folder(
    project: Project, root: Path, scenario: str, videos: list[tuple[str, Path, bool]],
    camera: str,
) -> None:  # fmt: skip
    bound = open_scenario(scenario)
    folder = root / f"demo-{scenario}"
    (folder / "videos").mkdir(parents=True)
    first = load_demonstration(project, videos[0][0]).frames.get(camera)
    image = first[0] if first is not None and len(first) else np.zeros((240, 320, 3), np.uint8)
    cv2.imwrite(str(folder / "initial.png"), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    entries = []
    for eid, mp4, ok in videos:
        name = f"videos/{eid}.mp4"
        shutil.copyfile(mp4, folder / name)
        entries.append({"file": name, "role": "human-success" if ok else "human-failure"})
    case = {
        "format": "rollout-workbench/case@1", "id": f"demo-{scenario}",
        "goal": bound.scenario.instruction,
        "domain": DOMAINS.get(bound.scenario.family, "others"), "clutter": "minimal",
        "initial_image": "initial.png", "videos": entries,
    }  # fmt: skip
    (folder / "case.json").write_text(json.dumps(case, indent=2), "utf-8")
