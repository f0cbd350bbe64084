"""The bundled demo cases, written as case folders in the documented import layout."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sim.synthetic._encode import encode_mp4, write_png
from sim.synthetic._layout import ObjectSpec, sample_scene
from sim.synthetic._model import Defect, RolloutPlan, RolloutStyle, Subgoal, TableKind
from sim.synthetic._render import render_rollout, render_scene, rollout_truth

CASE_FORMAT = "rollout-workbench/case@1"
INITIAL_LONGEST = 512

VideoRole = Literal["generated", "human-success", "human-failure"]


@dataclass(frozen=True)
class VideoSpec:
    """One video of a demo case: who made it, in which subgoal order, with which defects."""

    role: VideoRole
    defects: tuple[Defect, ...] = ()
    model: str | None = None
    seed: int | None = None
    order: tuple[int, ...] | None = None  # subgoal order for human recordings
    take: int = 1


@dataclass(frozen=True)
class CaseSpec:
    case_id: str
    goal: str
    domain: str
    clutter: str
    table: TableKind
    objects: tuple[ObjectSpec, ...]
    subgoals: tuple[Subgoal, ...]
    object_list: tuple[str, ...]
    colors: tuple[str, ...]
    videos: tuple[VideoSpec, ...]


def _gen(model: str, seed: int, *defects: Defect) -> VideoSpec:
    return VideoSpec("generated", tuple(defects), model=model, seed=seed)


DEMO_CASES: tuple[CaseSpec, ...] = (
    CaseSpec(
        case_id="stack_blocks",
        goal="Build a tower with the green block on the red block on the blue block, "
        "and put the yellow block in the box.",
        domain="household_org_storage",
        clutter="none",
        table="oak",
        objects=(
            ObjectSpec("box", "box", "brown", (0.62, 0.78, 1.15, 1.35)),
            ObjectSpec("blue block", "block", "blue", (-0.45, -0.20, 1.55, 1.85)),
            ObjectSpec("red block", "block", "red", (-1.15, -0.85, 0.80, 1.05)),
            ObjectSpec("green block", "block", "green", (-1.15, -0.85, 1.55, 1.90)),
            ObjectSpec("yellow block", "block", "yellow", (-0.25, -0.05, 0.85, 1.05)),
        ),
        subgoals=(
            Subgoal("red block", "blue block"),
            Subgoal("green block", "red block"),
            Subgoal("yellow block", "box", "in"),
        ),
        object_list=("blue block", "red block", "green block", "yellow block", "box"),
        colors=("blue", "red", "green", "yellow"),
        videos=(
            _gen("demo_gen_a", 101, Defect("teleport", 0)),
            _gen("demo_gen_b", 202),
            _gen("demo_gen_c", 303, Defect("pass_through", 2)),
            VideoSpec("human-success", order=(0, 1, 2), take=1),
            VideoSpec("human-success", order=(2, 0, 1), take=2),
            VideoSpec("human-failure", (Defect("unfinished", 2),), order=(0, 1, 2), take=1),
        ),
    ),
    CaseSpec(
        case_id="tidy_cups",
        goal="Put the red cup and the green cup on the yellow mat.",
        domain="kitchen_food_prep",
        clutter="minimal",
        table="walnut",
        objects=(
            ObjectSpec("yellow mat", "mat", "yellow", (-0.05, 0.25, 1.70, 1.90)),
            ObjectSpec("red cup", "cup", "red", (-1.15, -0.80, 0.85, 1.15)),
            ObjectSpec("green cup", "cup", "green", (0.65, 1.05, 1.00, 1.30)),
            ObjectSpec("orange", "fruit", "orange", (-1.15, -0.85, 1.75, 2.00)),
        ),
        subgoals=(Subgoal("red cup", "yellow mat"), Subgoal("green cup", "yellow mat")),
        object_list=("red cup", "green cup", "yellow mat"),
        colors=("red", "green", "yellow"),
        videos=(
            _gen("demo_gen_a", 101, Defect("duplicate", 0)),
            _gen("demo_gen_b", 202, Defect("hover", 1)),
            _gen("demo_gen_c", 303),
            VideoSpec("human-success", order=(0, 1), take=1),
            VideoSpec("human-success", order=(1, 0), take=2),
            VideoSpec("human-failure", (Defect("wrong_target", 1),), order=(0, 1), take=1),
        ),
    ),
    CaseSpec(
        case_id="plate_fruit",
        goal="Put the orange and the red apple on the white plate.",
        domain="kitchen_food_prep",
        clutter="minimal",
        table="linen",
        objects=(
            ObjectSpec("white plate", "plate", "white", (-0.15, 0.15, 1.45, 1.70)),
            ObjectSpec("orange", "fruit", "orange", (0.75, 1.10, 0.85, 1.10)),
            ObjectSpec("red apple", "fruit", "red", (-1.10, -0.75, 0.85, 1.15)),
            ObjectSpec("blue cup", "cup", "blue", (0.85, 1.15, 1.75, 2.00)),
        ),
        subgoals=(Subgoal("orange", "white plate"), Subgoal("red apple", "white plate")),
        object_list=("orange", "red apple", "white plate"),
        colors=("orange", "red", "white"),
        videos=(
            _gen("demo_gen_a", 101, Defect("no_attempt")),
            _gen("demo_gen_b", 202, Defect("vanish", 0), Defect("float_off", 1)),
            _gen("demo_gen_c", 303),
            VideoSpec("human-success", order=(0, 1), take=1),
            VideoSpec("human-failure", (Defect("unfinished", 1),), order=(0, 1), take=1),
        ),
    ),
)


def _file_name(case_id: str, v: VideoSpec) -> str:
    if v.role == "generated":
        return f"videos/{v.model}__{case_id}__seed_{v.seed}.mp4"
    kind = "success" if v.role == "human-success" else "failure"
    return f"videos/human_{kind}_{v.take}.mp4"


def demo_plan(spec: CaseSpec, index: int, seed: int = 0) -> tuple[RolloutPlan, int]:
    """The plan and render seed of video `index` of a demo case, as `write_demo_cases` uses."""
    case_index = next((k for k, c in enumerate(DEMO_CASES) if c.case_id == spec.case_id), 0)
    v = spec.videos[index]
    return _plan_for(spec, v, 1000 * seed + case_index), _render_seed(v, index, seed)


def _plan_for(spec: CaseSpec, v: VideoSpec, scene_seed: int) -> RolloutPlan:
    scene = sample_scene(spec.objects, scene_seed, spec.table)
    order = v.order or tuple(range(len(spec.subgoals)))
    subgoals = tuple(spec.subgoals[i] for i in order)
    # Defect indices in a VideoSpec refer to the executed order.
    style: RolloutStyle = "generated" if v.role == "generated" else "human"
    return RolloutPlan(scene, subgoals, v.defects, style)


def _render_seed(v: VideoSpec, index: int, seed: int) -> int:
    base = v.seed if v.seed is not None else 1000 + 17 * index + v.take
    return base + 7919 * seed


def write_case(
    spec: CaseSpec,
    out_dir: Path,
    *,
    seed: int,
    case_index: int,
    size: tuple[int, int],
    fps: int,
    progress: Callable[[str], None] | None = None,
) -> Path:
    folder = Path(out_dir) / spec.case_id
    (folder / "videos").mkdir(parents=True, exist_ok=True)
    scene_seed = 1000 * seed + case_index
    scene = sample_scene(spec.objects, scene_seed, spec.table)
    write_png(render_scene(scene, size=size), folder / "initial.png", longest=INITIAL_LONGEST)
    videos: list[dict[str, Any]] = []
    for i, v in enumerate(spec.videos):
        plan = _plan_for(spec, v, scene_seed)
        name = _file_name(spec.case_id, v)
        if progress is not None:
            progress(f"{spec.case_id}: rendering {name}")
        rseed = _render_seed(v, i, seed)
        frames = render_rollout(plan, size=size, fps=fps, seed=rseed)
        encode_mp4(frames, folder / name, fps)
        entry: dict[str, Any] = {"file": name, "role": v.role}
        if v.role == "generated":
            entry["model"] = v.model
            entry["seed"] = v.seed
        entry["demo_truth"] = rollout_truth(plan, fps=fps, seed=rseed).to_json()
        videos.append(entry)
    case = {
        "format": CASE_FORMAT,
        "id": spec.case_id,
        "goal": spec.goal,
        "domain": spec.domain,
        "clutter": spec.clutter,
        "initial_image": "initial.png",
        "object_list": list(spec.object_list),
        "colors": list(spec.colors),
        "videos": videos,
        "notes": (
            "Synthetic demo case drawn by Rollout Workbench's own renderer (sim.synthetic). "
            "Generated videos are scripted stand-ins for model rollouts. demo_truth lists the "
            "injected defects (0-based subgoal index in the order the video executes them)."
        ),
    }
    text = json.dumps(case, indent=2, ensure_ascii=False) + "\n"
    (folder / "case.json").write_text(text, encoding="utf-8")
    return folder


def write_demo_cases(
    out_dir: Path,
    *,
    seed: int = 0,
    size: tuple[int, int] = (640, 360),
    fps: int = 24,
    progress: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write the demo case folders (case.json, initial.png, videos/*.mp4) under `out_dir`.

    Each case has generated videos from three fictional generators (one clean, the others
    with injected defects), human-success recordings and one human-failure recording.
    Returns the case folders, in a fixed order.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    folders = []
    for k, spec in enumerate(DEMO_CASES):
        folders.append(
            write_case(spec, out, seed=seed, case_index=k, size=size, fps=fps, progress=progress)
        )
    if progress is not None:
        progress(f"wrote {len(folders)} demo cases to {out}")
    return folders
