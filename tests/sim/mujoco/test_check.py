"""check_arm: a good arm passes end to end, a bad spec is refused with a useful message."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sim.mujoco._arm import LAB7, WB6, ArmSpec, ArmSpecError
from sim.mujoco._check import check_arm


def test_check_arm_passes_lab7_with_one_trial() -> None:
    report = check_arm(LAB7, trials=1)
    assert report.ok, report.messages
    assert report.succeeded == report.trials == 1
    assert report.reach["fraction"] == 1.0
    assert report.names["joints"]["link4_joint"] == "act4"
    assert report.names["jaw_gap_cm"] == [0.0, 8.0]


def test_check_arm_refuses_a_spec_with_a_wrong_name() -> None:
    bad = dataclasses.replace(WB6, arm_joints=(*WB6.arm_joints[:5], "wrist3"))
    with pytest.raises(ArmSpecError, match=r"wb6.xml: no joint named 'wrist3'.*'wrist_3'"):
        check_arm(bad, trials=0)


def test_check_arm_requires_a_gripper_actuator() -> None:
    with pytest.raises(ArmSpecError, match=r"wb6.xml: a gripper actuator is required.*'gripper'"):
        check_arm(dataclasses.replace(WB6, gripper_actuators=()), trials=0)


def test_check_arm_says_a_directory_is_not_an_mjcf_file(tmp_path: Path) -> None:
    with pytest.raises(ArmSpecError, match=r"is a directory, not an MJCF file"):
        check_arm(dataclasses.replace(WB6, mjcf=tmp_path), trials=0)


def unstable_arm(folder: Path) -> ArmSpec:
    """WB6 with shoulder servos a million times too stiff for the 2 ms step: MuJoCo warns
    (once per MjData, so once per trial and per reach sample) and resets the simulation."""
    xml = WB6.mjcf.read_text().replace('kp="2000"', 'kp="2e9"')
    xml = xml.replace('forcerange="-250 250"', 'forcerange="-1e12 1e12"')
    path = folder / "stiff.xml"
    path.write_text(xml)
    return dataclasses.replace(WB6, mjcf=path)


def test_mujoco_warnings_are_reported_once_in_the_checks_words(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    report = check_arm(unstable_arm(tmp_path), trials=2)
    assert not report.ok and report.succeeded == 0
    warned = [m for m in report.messages if m.startswith("warning:")]
    assert len(warned) == 1, report.messages  # two trials, one line
    assert warned[0].startswith("warning: the simulation became unstable (NaN or huge")
    assert "first at joint '" in warned[0] and "in 2 of 2 trials" in warned[0]
    trial_errors = [m for m in report.messages if m.startswith("error: pick-and-place")]
    assert len(trial_errors) == 2 and all("unstable" in m for m in trial_errors)
    out, err = capfd.readouterr()
    assert "WARNING" not in out + err  # MuJoCo's own print is replaced by the report's line
