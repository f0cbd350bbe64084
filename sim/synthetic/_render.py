"""Public rendering entry points: the initial scene, rollout frames and their ground truth."""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from sim.synthetic._camera import Camera
from sim.synthetic._compose import Compositor, render_static
from sim.synthetic._model import DefectWindow, RolloutPlan, RolloutTruth, Scene
from sim.synthetic._objects import Placed
from sim.synthetic._script import build_timeline, wall_crossing
from sim.synthetic._table import table_image
from sim.synthetic._timeline import Timeline


def _check(size: tuple[int, int], fps: int) -> None:
    w, h = size
    if w < 32 or h < 32 or w % 2 or h % 2:
        raise ValueError(f"size must be even and at least 32x32 (H.264 4:2:0), got {w}x{h}")
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")


def _table_seed(scene: Scene) -> int:
    """The table texture follows the scene, so every video of a case shares the same f1."""
    return zlib.crc32(repr((scene.table, scene.objects)).encode()) & 0xFFFF


def _frame_count(timeline: Timeline, fps: int) -> int:
    return max(1, math.ceil(timeline.duration * fps - 1e-9))


def render_scene(scene: Scene, *, size: tuple[int, int] = (640, 360)) -> npt.NDArray[np.uint8]:
    """The initial scene without the hand (RGB uint8, H x W x 3)."""
    _check(size, 1)
    cam = Camera(*size)
    table = table_image(size[0], size[1], scene.table, _table_seed(scene))
    placed = tuple(Placed(o, o.x, o.y, 0.0) for o in scene.objects)
    return render_static(cam, table, placed)


def render_rollout(
    plan: RolloutPlan, *, size: tuple[int, int] = (640, 360), fps: int = 24, seed: int = 0
) -> Iterator[npt.NDArray[np.uint8]]:
    """Frames (RGB uint8, H x W x 3) of the scripted rollout; same arguments, same pixels."""
    _check(size, fps)
    timeline, _, _ = build_timeline(plan, seed)
    cam = Camera(*size)
    table = table_image(size[0], size[1], plan.scene.table, _table_seed(plan.scene))
    comp = Compositor(cam, table)
    for i in range(_frame_count(timeline, fps)):
        yield comp.frame(timeline.state_at(i / fps))


def rollout_truth(plan: RolloutPlan, *, fps: int = 24, seed: int = 0) -> RolloutTruth:
    """Where each injected defect is visible and how many subgoals reach their end state."""
    _check((32, 32), fps)
    timeline, windows, completed = build_timeline(plan, seed)
    n = _frame_count(timeline, fps)
    end = n / fps
    out: list[DefectWindow] = []
    for w in windows:
        out.append(DefectWindow(w.kind, w.subgoal, w.start_s, min(w.end_s, end)))
    for d in plan.defects:
        if d.kind != "pass_through":
            continue
        times = [i / fps for i in range(n)]
        hit = wall_crossing(timeline, plan.subgoals[d.subgoal].source, times)
        if hit is not None:
            out.append(DefectWindow("pass_through", d.subgoal, hit[0], hit[1] + 1.0 / fps))
    out.sort(key=lambda w: (w.start_s, w.subgoal))
    return RolloutTruth(tuple(out), completed, n, fps)
