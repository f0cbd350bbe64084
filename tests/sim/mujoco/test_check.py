"""check_arm: a good arm passes end to end, a bad spec is refused with a useful message."""

from __future__ import annotations

import dataclasses

import pytest

from sim.mujoco._arm import LAB7, WB6, ArmSpecError
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
