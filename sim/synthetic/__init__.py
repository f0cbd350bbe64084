"""Synthetic demo content: an egocentric tabletop drawn by our own code, with scripted rollouts.

A hand enters from the bottom of the frame and carries out placements (reach, grasp, carry,
place, release, withdraw) on coloured bricks, cups, plates, mats, fruit and a box. Defects that
annotators must catch (teleport, duplicate, vanish, pass_through, float_off, hover, unfinished,
wrong_target, no_attempt) can be injected into a subgoal; `rollout_truth` reports where.
Everything is deterministic for its arguments. Nothing is downloaded; av and cv2 are imported
only when a function needs them.
"""

from sim.synthetic._camera import Camera
from sim.synthetic._cases import (
    CASE_FORMAT,
    DEMO_CASES,
    CaseSpec,
    VideoSpec,
    demo_plan,
    write_case,
    write_demo_cases,
)
from sim.synthetic._corrupt import (
    CORRUPTION_KINDS,
    Corruption,
    CorruptionError,
    corrupt_frames,
    corrupt_set,
    corrupt_video,
    most_active,
)
from sim.synthetic._encode import Mp4Writer, encode_mp4, write_png
from sim.synthetic._layout import ObjectSpec, layout_distance, sample_scene
from sim.synthetic._model import (
    BOX_WALL,
    COLORS,
    DEFECT_GATES,
    DEFECT_KINDS,
    Defect,
    DefectKind,
    DefectWindow,
    ObjectKind,
    RolloutPlan,
    RolloutTruth,
    Scene,
    SceneObject,
    Subgoal,
)
from sim.synthetic._render import render_rollout, render_scene, rollout_truth

__all__ = [
    "BOX_WALL",
    "CASE_FORMAT",
    "COLORS",
    "CORRUPTION_KINDS",
    "DEFECT_GATES",
    "DEFECT_KINDS",
    "DEMO_CASES",
    "Camera",
    "CaseSpec",
    "Corruption",
    "CorruptionError",
    "Defect",
    "DefectKind",
    "DefectWindow",
    "Mp4Writer",
    "ObjectKind",
    "ObjectSpec",
    "RolloutPlan",
    "RolloutTruth",
    "Scene",
    "SceneObject",
    "Subgoal",
    "VideoSpec",
    "corrupt_frames",
    "corrupt_set",
    "corrupt_video",
    "demo_plan",
    "encode_mp4",
    "layout_distance",
    "most_active",
    "render_rollout",
    "render_scene",
    "rollout_truth",
    "sample_scene",
    "write_case",
    "write_demo_cases",
    "write_png",
]
