"""The gripper is measured the way it is used: driven open and closed in physics, settled, and
the gap taken between the colliding finger shapes.

Two third-party-style test grippers of our own (tests/sim/mujoco/arms/) break the old
kinematic, bounding-box measurement: pads on an unactuated linkage tied to the actuated crank
by equality constraints (with visual-only geoms on the crank and pads), and L-shaped mesh
fingers whose tilted bounding boxes reach into the gap. Each is measured within 5 mm of its
physics opening, passes the arm check, and stacks two bricks in the shipped scenario.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import mujoco
import numpy as np
import pytest

from sim.episode import EpisodeRunner, ScriptedAgent, open_scenario
from sim.mujoco import LAB7, WB6, ArmSpec, PhysicsWorld, check_arm
from sim.mujoco._bind import bind_arm
from sim.mujoco._compose import compile_spec, load_spec
from sim.mujoco._gripper import measure_gripper
from sim.mujoco._index import FINGER, scene_index
from tests.sim.mujoco.test_home_posture import UNLIMITED, ZERO_OUTSIDE

ARMS = Path(__file__).parent / "arms"

LINKAGE = ArmSpec(
    mjcf=ARMS / "linkage_gripper.xml",
    ee_site="lk_tcp",
    arm_joints=tuple(f"j{i}" for i in range(1, 7)),
    gripper_actuators=("lk_grip",),
)
MESH = ArmSpec(
    mjcf=ARMS / "mesh_gripper.xml",
    ee_site="mg_tcp",
    arm_joints=tuple(f"joint{i}" for i in range(1, 7)),
    gripper_actuators=("mg_grip",),
)


@dataclasses.dataclass(frozen=True)
class Truth:
    """What the test knows about a gripper from its file: finger bodies, open/closed ctrl."""

    spec: ArmSpec
    fingers: tuple[str, str]
    open_ctrl: tuple[float, ...]
    closed_ctrl: tuple[float, ...]


TRUTHS = {
    "linkage": Truth(LINKAGE, ("lk_pad_left", "lk_pad_right"), (0.8,), (0.0,)),
    "mesh": Truth(MESH, ("mg_finger_left", "mg_finger_right"), (0.04,), (0.0,)),
    "wb6": Truth(WB6, ("wb6_finger_left", "wb6_finger_right"), (0.045,), (0.0,)),
    "lab7": Truth(LAB7, ("finger_left", "finger_right"), (0.04, -0.04), (0.0, 0.0)),
    # the two arms of tests/sim/mujoco/test_home_posture.py
    "zero_outside": Truth(ZERO_OUTSIDE, ("jaw_a", "jaw_b"), (0.045, 0.045), (0.0, 0.0)),
    "unlimited": Truth(UNLIMITED, ("ul_left", "ul_right"), (0.045,), (0.0,)),
}


def _bare(spec: ArmSpec) -> mujoco.MjModel:
    return compile_spec(load_spec(spec.mjcf), spec.mjcf.name)


def _colliding(model: mujoco.MjModel, body: str) -> list[int]:
    b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body)
    assert b >= 0, body
    return [
        g
        for g in range(model.ngeom)
        if model.geom_bodyid[g] == b and (model.geom_contype[g] or model.geom_conaffinity[g])
    ]


def physics_gap(truth: Truth, ctrl: tuple[float, ...]) -> float:
    """The jaw gap in plain MuJoCo, independently of measure_gripper: start from the file's
    home keyframe, gravity on, hold the arm's servo targets, drive the gripper actuators to
    ``ctrl`` for two seconds, then ask MuJoCo for the distance between the two fingers'
    collision shapes (convex hulls for meshes)."""
    model = _bare(truth.spec)
    data = mujoco.MjData(model)
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home")
    if key >= 0:
        mujoco.mj_resetDataKeyframe(model, data, key)
    else:  # no keyframe: the arm held at its computed home (the gripper is what is measured)
        arm = bind_arm(model, truth.spec)
        for adr, act, q in zip(arm.qpos_adr, arm.actuator_ids, arm.home, strict=True):
            data.qpos[adr] = q
            data.ctrl[act] = q
    for name, c in zip(truth.spec.gripper_actuators, ctrl, strict=True):
        data.ctrl[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)] = c
    mujoco.mj_step(model, data, 1000)
    mujoco.mj_forward(model, data)
    left, right = (_colliding(model, b) for b in truth.fingers)
    fromto = np.zeros(6)
    return min(
        float(mujoco.mj_geomDistance(model, data, a, b, 0.5, fromto)) for a in left for b in right
    )


@pytest.mark.parametrize("name", ["linkage", "mesh", "wb6", "lab7", "zero_outside", "unlimited"])
def test_gripper_is_measured_within_5_mm_of_its_physics_opening(name: str) -> None:
    truth = TRUTHS[name]
    model = _bare(truth.spec)
    grip = measure_gripper(model, bind_arm(model, truth.spec))
    opened, closed = physics_gap(truth, truth.open_ctrl), physics_gap(truth, truth.closed_ctrl)
    assert abs(grip.gap_open - opened) < 0.005, (grip.gap_open, opened)
    assert abs(grip.gap_closed - max(closed, 0.0)) < 0.005, (grip.gap_closed, closed)
    assert grip.settled


def test_linkage_fingers_are_the_pads_and_the_jaws_close_along_the_site_y() -> None:
    model = _bare(LINKAGE)
    grip = measure_gripper(model, bind_arm(model, LINKAGE))
    pads = {
        mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in TRUTHS["linkage"].fingers
    }
    assert grip.finger_bodies == pads  # not the crank (it only carries visual geoms)
    assert abs(abs(float(grip.jaw[1])) - 1.0) < 1e-9
    assert grip.gap_open == pytest.approx(0.085, abs=0.001)
    # the pads' own boxes: 2 cm below the fingertip ends 2 cm past the site
    assert grip.depth == pytest.approx(0.02, abs=0.001)
    assert grip.thick == pytest.approx(0.016, abs=0.001)


def test_mesh_fingers_are_measured_from_their_vertices_not_their_boxes() -> None:
    model = _bare(MESH)
    grip = measure_gripper(model, bind_arm(model, MESH))
    assert grip.gap_open == pytest.approx(0.08, abs=0.001)
    assert grip.depth == pytest.approx(0.02, abs=0.001)  # the mesh tip, not its box's corner
    assert grip.thick == pytest.approx(0.022, abs=0.001)  # pad face to the foot's end


def test_the_measurement_is_cached_per_model() -> None:
    model = _bare(MESH)
    arm = bind_arm(model, MESH)
    assert measure_gripper(model, arm) is measure_gripper(model, arm)


def test_a_linkage_gripper_holds_with_its_pads_not_its_palm() -> None:
    """Perception's fingers are the measured ones: one slot per jaw on the pad bodies; the palm
    and the crank are no finger, so a palm brushing a brick never makes it "held"."""
    scene = scene_index("stack", LINKAGE)
    model = scene.model
    slots = {}
    for side in ("left", "right"):
        geoms = _colliding(model, f"arm/lk_pad_{side}")
        codes = {int(scene.geom_code[g]) for g in geoms}
        assert len(codes) == 1 and codes.pop() <= FINGER
        slots[side] = int(scene.geom_code[geoms[0]])
    assert slots["left"] != slots["right"]
    for body in ("arm/lk_hand", "arm/lk_crank"):
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body)
        assert all(int(scene.geom_code[g]) > FINGER for g in np.flatnonzero(model.geom_bodyid == b))


@pytest.mark.parametrize("spec", [LINKAGE, MESH], ids=["linkage", "mesh"])
def test_test_gripper_passes_the_arm_check(spec: ArmSpec) -> None:
    report = check_arm(spec, trials=3)
    assert report.ok, report.messages
    assert report.succeeded == 3


@pytest.mark.parametrize("spec", [LINKAGE, MESH], ids=["linkage", "mesh"])
def test_test_gripper_stacks_two_bricks_in_physics(spec: ArmSpec) -> None:
    bound = open_scenario("stack-two")
    world = PhysicsWorld(bound.scenario.family, bound.layout, arm=spec, delta=bound.scenario.delta)
    try:
        runner = EpisodeRunner(world, bound, ScriptedAgent(bound.reference), seed=None, sinks=[])
        runner.run()
    finally:
        world.close()
    result = runner.result
    assert result is not None and result.status == "completed" and result.success, result
