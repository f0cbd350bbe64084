"""Arm files load, bind and compose; bad names and bad XML give errors naming the file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import mujoco
import pytest

from sim.mujoco._arm import LAB7, WB6, ArmSpec, ArmSpecError
from sim.mujoco._bind import bind_arm
from sim.mujoco._compose import compose, compose_spec
from sim.mujoco._trial import CHECK_TABLE


@pytest.mark.parametrize("arm", [WB6, LAB7], ids=["wb6", "lab7"])
def test_arm_file_loads_standalone_and_binds(arm: ArmSpec) -> None:
    model = mujoco.MjModel.from_xml_path(str(arm.mjcf))
    b = bind_arm(model, arm)
    assert len(b.joint_ids) == len(arm.arm_joints) == len(b.actuator_ids)
    assert len(b.gripper_ids) == len(arm.gripper_actuators)
    assert all(o != c for o, c in zip(b.gripper_open, b.gripper_closed, strict=True))
    assert int(model.site_bodyid[b.site_id]) in b.gripper_body_ids
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, "wrist_cam") >= 0
    assert len(b.home) == len(arm.arm_joints)


def test_wb6_names_and_gripper_design() -> None:
    model = mujoco.MjModel.from_xml_path(str(WB6.mjcf))
    b = bind_arm(model, WB6)
    assert model.body(b.root_body_id).name == "wb6_base"
    assert b.gripper_open == (0.045,) and b.gripper_closed == (0.0,)


def test_lab7_open_end_is_found_per_actuator() -> None:
    model = mujoco.MjModel.from_xml_path(str(LAB7.mjcf))
    b = bind_arm(model, LAB7)
    assert b.gripper_open == (0.04, -0.04)
    assert b.gripper_closed == (0.0, 0.0)


@pytest.mark.parametrize("arm", [WB6, LAB7], ids=["wb6", "lab7"])
def test_compose_prefixes_names_and_binds(arm: ArmSpec) -> None:
    model, b = compose(CHECK_TABLE, arm)
    assert model.site(b.site_id).name == "arm/" + arm.ee_site
    assert [model.joint(j).name for j in b.joint_ids] == ["arm/" + n for n in arm.arm_joints]
    assert model.body(b.root_body_id).name.startswith("arm/")
    assert model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC


def test_wrong_joint_name_names_file_and_lists_joints() -> None:
    bad = dataclasses.replace(LAB7, arm_joints=("link1_joint", "elbow"))
    model = mujoco.MjModel.from_xml_path(str(LAB7.mjcf))
    with pytest.raises(ArmSpecError) as err:
        bind_arm(model, bad)
    msg = str(err.value)
    assert msg.startswith("lab7.xml: no joint named 'elbow'")
    assert "link1_joint" in msg and "link7_joint" in msg


def test_wrong_site_name_suggests_close_match() -> None:
    bad = dataclasses.replace(WB6, ee_site="wb6/tpc")
    with pytest.raises(ArmSpecError, match=r"wb6\.xml: no site named 'wb6/tpc'.*'wb6/tcp'"):
        compose(CHECK_TABLE, bad)


def test_wrong_gripper_actuator_lists_actuators() -> None:
    bad = dataclasses.replace(LAB7, gripper_actuators=("gripper",))
    model = mujoco.MjModel.from_xml_path(str(LAB7.mjcf))
    with pytest.raises(ArmSpecError, match=r"no actuator named 'gripper'.*finger_left_act"):
        bind_arm(model, bad)


def test_joint_without_position_servo_is_refused(tmp_path: Path) -> None:
    text = WB6.mjcf.read_text().replace(
        '<position name="elbow" class="wb6_big" joint="elbow"/>',
        '<motor name="elbow" joint="elbow" gear="1"/>',
    )
    path = tmp_path / "wb6_motor.xml"
    path.write_text(text)
    model = mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ArmSpecError, match=r"wb6_motor.xml: joint 'elbow' has no position"):
        bind_arm(model, dataclasses.replace(WB6, mjcf=path))


def test_malformed_xml_names_file_and_line(tmp_path: Path) -> None:
    text = WB6.mjcf.read_text().replace('<joint name="elbow"', '<joint nme="elbow"', 1)
    path = tmp_path / "broken_arm.xml"
    path.write_text(text)
    with pytest.raises(ArmSpecError) as err:
        compose(CHECK_TABLE, dataclasses.replace(WB6, mjcf=path))
    msg = str(err.value)
    assert msg.startswith("broken_arm.xml: ")
    assert "nme" in msg and "line" in msg


def test_unclosed_tag_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "scene.xml"
    path.write_text("<mujoco>\n<worldbody>\n<body name='a'>\n</worldbody>\n</mujoco>\n")
    with pytest.raises(ValueError, match=r"scene\.xml: .*[Ll]ine"):
        compose(path, WB6)


def test_missing_mount_site_lists_sites() -> None:
    scene = "<mujoco><worldbody><site name='mount'/></worldbody></mujoco>"
    with pytest.raises(ArmSpecError, match=r"no site named 'arm_mount'.*mount"):
        compose_spec(scene, WB6)
