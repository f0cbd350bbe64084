"""Teleoperation works with a lab's own arm profile like a shipped arm: the demonstration
records the profile's label and replays state for state."""

from __future__ import annotations

import shutil
from pathlib import Path

from sim.episode import add_arm, open_scenario
from sim.mujoco import WB6
from sim.teleop import Recorder, replay_demonstration, store_demonstration
from storage import Project
from tests.sim.teleop.operator import Operator, pick_and_place


def test_a_profile_arm_stacks_by_teleop_and_replays(tmp_path: Path) -> None:
    lab = tmp_path / "lab_six.xml"
    shutil.copy(WB6.mjcf, lab)
    with Project.create(tmp_path / "p") as p:
        add_arm(p, "lab-six", lab, trials=0, ee_site=WB6.ee_site, arm_joints=WB6.arm_joints,
                gripper_actuators=WB6.gripper_actuators)  # fmt: skip
        rec = Recorder(open_scenario("stack-two"), "lab-six", project=p)
        rec.start()
        pick_and_place(Operator(rec.teleop, rec.step), "brick_red", "brick_blue")
        (demo,) = rec.stop()
        rec.close()
        assert demo.success and demo.arm == "lab-six@1"
        eid = store_demonstration(p, demo)
        assert p.episodes.get(eid).config["arm"] == "lab-six@1"
        report = replay_demonstration(p, eid)
        assert report.identical, report
