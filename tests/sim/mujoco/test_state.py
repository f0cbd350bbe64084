"""Controller runs are deterministic and resume bit-identically from a snapshot."""

from __future__ import annotations

import json

import mujoco
import numpy as np

from sim.mujoco._arm import WB6
from sim.mujoco._controller import Controller
from sim.mujoco._trial import CHECK_TABLE, CONTROL_STEPS, TABLE_Z
from tests.sim.mujoco.arm_helpers import body, run, setup

STATE = mujoco.mjtState.mjSTATE_INTEGRATION


def _sequence(model: mujoco.MjModel, data: mujoco.MjData, ctl: Controller) -> list[bytes]:
    trace = []
    ctl.pick(data, body(model, "box_b"))
    trace += run(model, data, ctl)
    ctl.place(data, np.array([0.3, -0.25, TABLE_Z]))
    trace += run(model, data, ctl)
    ctl.home(data)
    trace += run(model, data, ctl)
    return trace


def test_two_runs_are_identical_at_every_control_step() -> None:
    first = _sequence(*_fresh())
    second = _sequence(*_fresh())
    assert len(first) == len(second) > 100
    assert first == second


def _fresh() -> tuple[mujoco.MjModel, mujoco.MjData, Controller]:
    model, data, _, ctl = setup(CHECK_TABLE, WB6)
    return model, data, ctl


def test_restore_mid_skill_continues_identically() -> None:
    model, data, ctl = _fresh()
    ctl.pick(data, body(model, "box_a"))
    for _ in range(150):  # into the descent
        ctl.step(data)
        for _ in range(CONTROL_STEPS):
            mujoco.mj_step(model, data)
    assert ctl.busy
    snap = np.zeros(mujoco.mj_stateSize(model, STATE))
    mujoco.mj_getState(model, data, snap, STATE)
    saved = json.loads(json.dumps(ctl.state()))  # the state is plain JSON
    reference = run(model, data, ctl)
    assert ctl.outcome == "ok"

    data2 = mujoco.MjData(model)
    mujoco.mj_setState(model, data2, snap, STATE)
    ctl2 = Controller(model, ctl.arm)
    ctl2.restore(saved)
    resumed = run(model, data2, ctl2)
    assert ctl2.outcome == "ok"
    assert resumed == reference
