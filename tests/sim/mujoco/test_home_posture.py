"""One home posture everywhere, and a check that warns only about what is wrong, once.

Two test arms of our own (tests/sim/mujoco/arms): ``zero_outside.xml``, whose zero pose lies
outside its elbow's range and which has a ``home`` keyframe (and a flange servo whose
ctrlrange is the joint range written to fewer digits), and ``unlimited.xml``, whose forearm
roll and flange turn without limits and which has no keyframe (so its home is computed). And
the guide's example (docs/examples/byo-arm): symmetric ranges and no keyframe, so mid-range is
the arm pointing straight up, from where no trial could start.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from sim.mujoco import ArmSpec, PhysicsWorld, check_arm, compose
from sim.mujoco._ik import Kinematics, down_rotation
from sim.mujoco._scene import load_scene_info
from sim.mujoco._trial import CHECK_TABLE, home_data
from sim.scenario import bind, resolve

ARMS = Path(__file__).parent / "arms"
DOCS = Path(__file__).parents[3] / "docs" / "examples" / "byo-arm"
ZERO_OUTSIDE = ArmSpec(
    mjcf=ARMS / "zero_outside.xml",
    ee_site="tool_tip",
    arm_joints=("j_yaw", "j_shoulder", "j_elbow", "j_roll", "j_pitch", "j_flange"),
    gripper_actuators=("m_jaw_a", "m_jaw_b"),
)
UNLIMITED = ArmSpec(
    mjcf=ARMS / "unlimited.xml",
    ee_site="grasp_point",
    arm_joints=("base", "shoulder", "elbow", "forearm_roll", "wrist_pitch", "wrist_turn"),
    gripper_actuators=("a_grip",),
)


def _without_keyframe(folder: Path) -> ArmSpec:
    text = ZERO_OUTSIDE.mjcf.read_text()
    head, rest = text.split("<keyframe>")
    path = folder / "zero_outside_nokey.xml"
    path.write_text(head + rest.split("</keyframe>", 1)[1])
    return ArmSpec(path, ZERO_OUTSIDE.ee_site, ZERO_OUTSIDE.arm_joints,
                   ZERO_OUTSIDE.gripper_actuators)  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "source"),
    [(ZERO_OUTSIDE, "home keyframe"), (UNLIMITED, "computed: gripper down over the table")],
    ids=["zero_outside", "unlimited"],
)
def test_test_arm_passes_the_check_with_its_home_and_no_spurious_warning(
    spec: ArmSpec, source: str
) -> None:
    report = check_arm(spec, trials=3)
    assert report.messages == []  # no short-servo or no-range warning, no numpy warning
    assert report.ok and report.succeeded == 3
    assert report.reach["fraction"] == 1.0
    assert report.home["source"] == source
    assert list(report.home["posture"]) == list(spec.arm_joints)


def test_zero_outside_homes_at_its_keyframe_not_its_zero_pose() -> None:
    model, arm = compose(CHECK_TABLE, ZERO_OUTSIDE)
    assert arm.home == pytest.approx((0.0, 0.2, 1.6, 0.0, 1.3416, 0.0))
    elbow = arm.joint_ids[2]
    lo, hi = model.jnt_range[elbow]
    assert not lo <= model.qpos0[arm.qpos_adr[2]] <= hi  # the zero pose is outside the range


def test_reach_trials_and_physics_worlds_start_from_the_same_posture(tmp_path: Path) -> None:
    """Without a keyframe the home is computed (inside every range, gripper pointing down over
    the table) and used by the trial data and a scenario's physics world alike."""
    spec = _without_keyframe(tmp_path)
    model, arm = compose(CHECK_TABLE, spec)
    assert arm.home_source == "computed: gripper down over the table"
    for j, q in zip(arm.joint_ids, arm.home, strict=True):
        lo, hi = model.jnt_range[j]
        assert lo <= q <= hi
    trial = home_data(model, arm)
    assert [trial.qpos[a] for a in arm.qpos_adr] == pytest.approx(arm.home)
    tool_z = trial.site_xmat[arm.site_id].reshape(3, 3)[:, 2]
    assert tool_z == pytest.approx([0.0, 0.0, -1.0], abs=0.01)
    base = trial.xpos[arm.root_body_id]
    assert trial.site_xpos[arm.site_id] - base == pytest.approx([0.5, 0.0, 0.35], abs=0.002)
    scenario, source = resolve("stack-two")
    bound = bind(scenario, load_scene_info(scenario.family), source=source)
    world = PhysicsWorld(scenario.family, bound.layout, arm=spec, delta=scenario.delta)
    world.reset(scenario.seed)
    scene_arm = world.scene.arm
    assert scene_arm.home == pytest.approx(arm.home, abs=1e-9)  # the base frame's target
    got = [world.data.qpos[a] for a in scene_arm.qpos_adr]
    assert got == pytest.approx(arm.home, abs=0.02)  # after the layout's half second to settle
    report = check_arm(spec, trials=1)
    assert report.ok, report.messages
    assert report.home["source"] == "computed: gripper down over the table"


def test_the_guides_arm_starts_with_the_gripper_down_not_straight_up() -> None:
    spec = ArmSpec(DOCS / "my_arm.xml", "tcp", tuple(f"j{i}" for i in range(1, 7)),
                   ("jaws/grip",))  # fmt: skip
    report = check_arm(spec, trials=3)
    assert report.messages == [] and report.ok, report.messages
    assert report.home["source"] == "computed: gripper down over the table"
    assert report.home["posture"] != dict.fromkeys(spec.arm_joints, 0.0)  # not mid-range


def test_an_arm_that_cannot_point_down_over_the_table_homes_mid_range(tmp_path: Path) -> None:
    text = (DOCS / "my_arm.xml").read_text()
    for old, new in (('pos="0 0 0.5"', 'pos="0 0 0.1"'), ('pos="0 0 0.45"', 'pos="0 0 0.05"')):
        text = text.replace(old, new)  # forearm and upper arm a tenth long: no reach at all
    path = tmp_path / "stubby.xml"
    path.write_text(text.replace('file="jaws.xml"', f'file="{DOCS / "jaws.xml"}"'))
    _, arm = compose(CHECK_TABLE, ArmSpec(path, "tcp", tuple(f"j{i}" for i in range(1, 7)),
                                          ("jaws/grip",)))  # fmt: skip
    assert arm.home_source == "computed: mid-range"
    assert arm.home == pytest.approx((0.0,) * 6)


def test_unlimited_joints_wrap_their_reference_into_one_turn(tmp_path: Path) -> None:
    text = UNLIMITED.mjcf.read_text().replace(
        '<joint name="wrist_turn" class="ul_wrist" axis="0 0 1"/>',
        '<joint name="wrist_turn" class="ul_wrist" axis="0 0 1" ref="7"/>',
    )
    path = tmp_path / "wound.xml"
    path.write_text(text)
    _, arm = compose(CHECK_TABLE, ArmSpec(path, UNLIMITED.ee_site, UNLIMITED.arm_joints,
                                          UNLIMITED.gripper_actuators))  # fmt: skip
    assert arm.home[-1] == pytest.approx(7 - 2 * math.pi)


def test_ik_on_an_unlimited_last_joint_raises_no_numpy_warning() -> None:
    model, arm = compose(CHECK_TABLE, UNLIMITED)
    kin = Kinematics(model, arm)
    kin.load(mujoco.MjData(model))
    home = np.array(arm.home)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # -inf + inf used to warn "invalid value encountered"
        res = kin.solve(home, np.array([2.0, 0.0, 0.8]), down_rotation(0.0, np.array([0, 1.0, 0])),
                        rest=home)  # fmt: skip
    assert not res.ok  # 2 m away: out of reach, so the restarts were considered


def test_a_really_short_servo_and_a_keyframe_out_of_range_are_still_reported(
    tmp_path: Path,
) -> None:
    text = ZERO_OUTSIDE.mjcf.read_text()
    text = text.replace('ctrlrange="-6.2831 6.2831"', 'ctrlrange="-5 5"')
    text = text.replace('qpos="0 0.2 1.6 0 1.3416 0', 'qpos="0 0.2 0.1 0 1.3416 0')
    path = tmp_path / "short_servo.xml"
    path.write_text(text)
    spec = ArmSpec(path, ZERO_OUTSIDE.ee_site, ZERO_OUTSIDE.arm_joints,
                   ZERO_OUTSIDE.gripper_actuators)  # fmt: skip
    report = check_arm(spec, trials=0)
    assert report.messages == [
        "warning: the servo of 'j_flange' cannot reach the joint's whole range "
        "(-5.000..5.000 of -6.283..6.283)",
        "warning: the home keyframe puts 'j_elbow' at 0.100, outside its range 0.300..3.050; "
        "the check starts from the nearest limit",
    ]
    assert report.home["posture"]["j_elbow"] == pytest.approx(0.3)


@pytest.mark.parametrize("spec", [ZERO_OUTSIDE, UNLIMITED], ids=["zero_outside", "unlimited"])
def test_test_arm_completes_stack_two_in_physics(spec: ArmSpec) -> None:
    from sim.episode import EpisodeRunner, ScriptedAgent

    scenario, source = resolve("stack-two")
    bound = bind(scenario, load_scene_info(scenario.family), source=source)
    world = PhysicsWorld(scenario.family, bound.layout, arm=spec, delta=scenario.delta)
    runner = EpisodeRunner(world, bound, ScriptedAgent(bound.reference))
    try:
        runner.run()
    finally:
        world.close()
    result = runner.result
    assert result is not None and result.status == "completed"
    assert result.success, [(a.action.describe(), a.outcome) for a in runner.actions]
    assert [a.outcome for a in runner.actions] == ["ok", "ok"]


def test_python_warnings_during_a_check_become_one_line_each() -> None:
    from sim.mujoco._check_warnings import explain_warnings, mujoco_warnings

    model, _ = compose(CHECK_TABLE, ZERO_OUTSIDE)
    with mujoco_warnings() as heard:
        for _ in range(3):  # as when every trial hits the same arithmetic
            np.float64(-np.inf) + np.float64(np.inf)
    lines = explain_warnings(heard, model, trials=3)
    assert len(lines) == 1, lines
    assert lines[0].startswith("warning: a numerical problem came up while checking (invalid")
    assert "test_home_posture.py:" in lines[0]
