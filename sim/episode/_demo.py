"""MuJoCo content for ``workbench demo``: rollouts to annotate and recorded episodes.

Each demo case is one shipped scenario at its seed: the scripted reference (a success) and
variants with an injected anomaly — an object that vanishes from the gripper, one that jumps
after it was placed, one that flips — which break the goal and the physics in ways the rubric's
gates should catch. Every run is also stored as an episode with its head-camera video, so the
project has traces to step through. The videos go into case folders in the documented import
layout, and ``import_cases`` brings them in like any user's cases (media are shared by sha256).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sim.episode._build import open_scenario, run_episode
from sim.scenario import BoundScenario, schedule_from_json
from sim.world import Anomaly
from storage import Project

CASE_FORMAT = "rollout-workbench/case@1"


@dataclass(frozen=True)
class Variant:
    model: str
    seed: int
    anomaly: Anomaly | None = None
    when: dict[str, Any] | None = None  # predicate that triggers the anomaly


@dataclass(frozen=True)
class SimCase:
    case_id: str
    scenario: str
    domain: str
    variants: tuple[Variant, ...]


SIM_CASES: tuple[SimCase, ...] = (
    SimCase("sim_stack_three", "stack-three", "household_org_storage", (
        Variant("wb-scripted-arm", 1),
        Variant("wb-faulty-sim", 2, Anomaly("remove", "brick_green"), {"held": "brick_green"}),
        Variant("wb-faulty-sim", 3, Anomaly("displace", "brick_red", (0.09, 0.0, 0.0)),
                {"on": ["brick_red", "brick_blue"]}),
    )),
    SimCase("sim_prep_board", "prep-board", "kitchen_food_prep", (
        Variant("wb-scripted-arm", 1),
        Variant("wb-faulty-sim", 2, Anomaly("displace", "bun", (0.0, 0.2, 0.0)),
                {"on": ["bun", "cutting_board"]}),
    )),
    SimCase("sim_mug_drawer", "mug-in-drawer", "household_org_storage", (
        Variant("wb-scripted-arm", 1),
        Variant("wb-faulty-sim", 2, Anomaly("remove", "mug_red"), {"held": "mug_red"}),
    )),
)  # fmt: skip


def _with_anomaly(bound: BoundScenario, v: Variant) -> BoundScenario:
    if v.anomaly is None:
        return replace(bound, anomalies=())
    placed = {p.obj for p in bound.layout.placements}
    schedule = schedule_from_json([{**v.anomaly.to_json(), "when": v.when}], placed)
    return replace(bound, anomalies=schedule)


def write_sim_cases(
    project: Project,
    out_dir: Path,
    *,
    size: tuple[int, int] = (640, 480),
    progress: Callable[[str], None] | None = None,
) -> list[Path]:
    """Run every demo variant (recorded as episodes in ``project``) and write case folders."""
    folders = []
    for case in SIM_CASES:
        bound = open_scenario(case.scenario)
        folder = Path(out_dir) / case.case_id
        (folder / "videos").mkdir(parents=True, exist_ok=True)
        videos: list[dict[str, Any]] = []
        for v in case.variants:
            name = f"videos/{v.model}__{case.case_id}__seed_{v.seed}.mp4"
            if progress is not None:
                progress(f"{case.case_id}: simulating {name}")
            reference = v.anomaly is None
            ep = run_episode(_with_anomaly(bound, v), project=project, videos=("head",),
                             video_size=size, reference=reference)  # fmt: skip
            stored = project.media_path(ep.video_shas["head"])
            shutil.copyfile(stored, folder / name)  # the same bytes: import will share them
            if reference:
                _initial_png(stored, folder / "initial.png")
            videos.append({"file": name, "role": "generated", "model": v.model, "seed": v.seed})
        doc = {
            "format": CASE_FORMAT,
            "id": case.case_id,
            "goal": bound.scenario.instruction,
            "domain": case.domain,
            "clutter": "minimal",
            "initial_image": "initial.png",
            "videos": videos,
            "notes": (
                f"MuJoCo rollouts of the shipped scenario '{case.scenario}' (seed "
                f"{bound.scenario.seed}) by the scripted arm; the faulty-sim videos have an "
                "injected anomaly (see the episode traces in the project)."
            ),
        }
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        (folder / "case.json").write_text(text, encoding="utf-8")
        folders.append(folder)
    return folders


def _initial_png(video: Path, out: Path) -> None:
    """f₁ is the rollout's own first frame (decoded exactly, not rendered again)."""
    from sim.synthetic import write_png
    from storage.media import FrameReader, index_video

    with FrameReader(video, index_video(video)) as reader:
        write_png(reader.read(0), out, longest=512)


__all__ = ["SIM_CASES", "run_episode", "write_sim_cases"]
