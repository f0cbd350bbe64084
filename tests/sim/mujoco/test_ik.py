"""Damped-least-squares IK reaches gripper-down poses over the table for both arms."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from sim.mujoco._arm import LAB7, WB6, ArmSpec
from sim.mujoco._compose import compose
from sim.mujoco._gripper import measure_gripper
from sim.mujoco._ik import Kinematics, down_rotation, jaw_yaw, rotation_error
from sim.mujoco._trial import CHECK_TABLE, TABLE_Z


@pytest.mark.parametrize("arm", [WB6, LAB7], ids=["wb6", "lab7"])
def test_ik_reaches_sampled_table_poses(arm: ArmSpec) -> None:
    model, b = compose(CHECK_TABLE, arm)
    data = mujoco.MjData(model)
    kin = Kinematics(model, b)
    kin.load(data)
    jaw = measure_gripper(model, b).jaw
    home = np.array(b.home)
    rng = np.random.default_rng(7)
    for _ in range(25):
        pos = np.array(
            [rng.uniform(0.15, 0.72), rng.uniform(-0.4, 0.4), TABLE_Z + rng.uniform(0.02, 0.3)]
        )
        yaw = rng.uniform(-math.pi / 2, math.pi / 2)
        res = kin.solve(home, pos, down_rotation(yaw, jaw), rest=home)
        assert res.ok, (pos, yaw)
        # check independently of the solver's own bookkeeping
        p, r = kin.fk(res.q)
        assert np.linalg.norm(p - pos) < 0.005
        assert np.linalg.norm(rotation_error(down_rotation(yaw, jaw), r)) < math.radians(3)
        assert np.all(res.q >= kin.lo) and np.all(res.q <= kin.hi)


def test_down_rotation_points_site_z_down_and_jaw_at_yaw() -> None:
    jaw = np.array([math.sqrt(0.5), math.sqrt(0.5), 0.0])
    rot = down_rotation(0.7, jaw)
    np.testing.assert_allclose(rot @ np.array([0.0, 0.0, 1.0]), [0.0, 0.0, -1.0], atol=1e-12)
    assert jaw_yaw(rot, jaw) == pytest.approx(0.7)
    np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-12)
