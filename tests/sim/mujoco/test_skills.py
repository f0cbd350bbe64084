"""The controller's skills in physics: friction pick-and-place, push, drawer, knob."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from sim.mujoco._arm import LAB7, WB6, ArmSpec
from sim.mujoco._trial import CHECK_TABLE, TABLE_Z, Layout, judge, pick_place_trial
from tests.sim.mujoco.arm_helpers import body, joint_value, run, setup
from tests.sim.mujoco.arm_scenes import ARTICULATED

LAYOUT = Layout(
    boxes=(
        (0.38, -0.18, 0.5, 0.022, 0.028, 0.03),
        (0.5, 0.05, -0.3, 0.02, 0.03, 0.02),
        (0.62, -0.12, 1.0, 0.025, 0.02, 0.04),
    ),
    target=(0.55, 0.25),
)


@pytest.mark.parametrize("arm", [WB6, LAB7], ids=["wb6", "lab7"])
def test_pick_and_place_moves_the_box_to_the_target(arm: ArmSpec) -> None:
    result = pick_place_trial(arm, LAYOUT)
    assert result.ok, result.reason


def test_place_reports_ok_and_box_is_released_upright() -> None:
    model, data, b, ctl = setup(CHECK_TABLE, WB6)
    box = body(model, "box_a")
    ctl.pick(data, box)
    run(model, data, ctl)
    assert ctl.outcome == "ok" and ctl.held == box
    assert data.xpos[box][2] > TABLE_Z + 0.06  # lifted
    ctl.place(data, np.array([0.5, 0.2, TABLE_Z]), yaw=0.4)
    run(model, data, ctl)
    assert ctl.outcome == "ok" and ctl.held == -1
    assert judge(model, data, b, box, (0.5, 0.2)) == ""
    heading = math.atan2(data.xmat[box][3], data.xmat[box][0])
    assert abs(math.remainder(heading - 0.4, math.pi / 2)) < math.radians(5)


def test_unreachable_target_fails_before_moving() -> None:
    model, data, _, ctl = setup(CHECK_TABLE, WB6)
    box = body(model, "box_a")
    ctl.pick(data, box)
    run(model, data, ctl)
    qpos = data.qpos.copy()
    ctl.place(data, np.array([1.8, 0.0, TABLE_Z]))
    assert not ctl.busy
    assert ctl.outcome is not None and ctl.outcome.startswith("failed: unreachable")
    assert np.array_equal(data.qpos, qpos)


def test_grasp_on_nothing_is_reported_and_the_arm_backs_off() -> None:
    model, data, _, ctl = setup(CHECK_TABLE, WB6)
    box = body(model, "box_a")
    ctl.pick(data, box)
    # the box is taken away after planning: the jaws close on air
    adr = model.jnt_qposadr[model.body_jntadr[box]]
    data.qpos[adr : adr + 3] = [0.3, 0.35, TABLE_Z + 0.03]
    mujoco.mj_forward(model, data)
    run(model, data, ctl)
    assert ctl.outcome == "failed: grasp missed (the gripper closed on nothing)"
    assert ctl.held == -1
    ctl.pick(data, box)
    with pytest.raises(RuntimeError, match="busy"):
        ctl.pick(data, box)


def test_too_wide_object_is_refused() -> None:
    model, data, _, ctl = setup(ARTICULATED, WB6)
    ctl.pick(data, body(model, "cabinet"))
    assert ctl.outcome is not None and "too wide" in ctl.outcome


def test_push_moves_the_puck_along_the_direction() -> None:
    model, data, _, ctl = setup(ARTICULATED, WB6)
    puck = body(model, "puck")
    start = data.xpos[puck].copy()
    ctl.push(data, puck, np.array([0.0, 1.0, 0.0]), 0.1)
    run(model, data, ctl)
    assert ctl.outcome == "ok"
    moved = data.xpos[puck] - start
    assert moved[1] == pytest.approx(0.1, abs=0.02)
    assert abs(moved[0]) < 0.02


def test_follow_pulls_the_drawer_open() -> None:
    model, data, _, ctl = setup(ARTICULATED, WB6)
    handle = body(model, "drawer_handle")
    start = data.xpos[handle].copy()
    ctl.follow(
        data, handle, [start + np.array([-0.08, 0.0, 0.0]), start + np.array([-0.15, 0.0, 0.0])]
    )
    run(model, data, ctl)
    assert ctl.outcome == "ok"
    assert joint_value(model, data, "drawer_slide") == pytest.approx(0.15, abs=0.015)


def test_turn_rotates_the_knob() -> None:
    model, data, _, ctl = setup(ARTICULATED, WB6)
    ctl.turn(data, body(model, "knob"), math.pi / 2)
    run(model, data, ctl)
    assert ctl.outcome == "ok"
    assert joint_value(model, data, "knob_hinge") == pytest.approx(math.pi / 2, abs=0.1)


def test_from_an_arbitrary_posture_the_arm_goes_home_first() -> None:
    model, _, _, ctl = setup(CHECK_TABLE, LAB7)
    data = mujoco.MjData(model)  # qpos0: the arm points straight up
    mujoco.mj_forward(model, data)
    box = body(model, "box_a")
    ctl.pick(data, box)
    assert ctl.phase == "home"
    run(model, data, ctl)
    assert ctl.outcome == "ok" and ctl.held == box
