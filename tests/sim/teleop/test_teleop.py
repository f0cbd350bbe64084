"""Teleoperation core: a scripted operator grasps and places by velocity commands; the clutch
holds; limits clamp and are named; demonstrations record, re-record, store, load and replay."""

from __future__ import annotations

import numpy as np
import pytest

from sim.contracts import evaluate
from sim.episode import make_world, open_scenario
from sim.mujoco import PhysicsWorld
from sim.teleop import (
    Command,
    Recorder,
    Span,
    Teleop,
    list_demonstrations,
    load_demonstration,
    replay_demonstration,
    store_demonstration,
)
from storage import Project
from tests.sim.teleop.operator import Operator, pick_and_place


@pytest.fixture(scope="module")
def bound():  # type: ignore[no-untyped-def]
    return open_scenario("stack-two")


def _teleop(bound, arm: str) -> Teleop:  # type: ignore[no-untyped-def]
    world = make_world(bound, "physics", arm=arm)
    assert isinstance(world, PhysicsWorld)
    world.reset(bound.scenario.seed)
    return Teleop(world)


@pytest.mark.parametrize("arm", ["wb6", "lab7"])
def test_velocity_commands_stack_the_red_brick_on_the_blue(bound, arm: str) -> None:  # type: ignore[no-untyped-def]
    t = _teleop(bound, arm)
    assert not evaluate(bound.contract, t.world.graph, []).satisfied
    op = Operator(t)
    pick_and_place(op, "brick_red", "brick_blue")
    assert evaluate(bound.contract, t.world.graph, []).satisfied
    assert t.world.graph.held() is None  # let go of it
    # the skill controller never ran: the manual hook drove every control period
    assert t.world.controller.phase == "idle"


def test_the_clutch_holds_the_arm_and_ignores_every_command(bound) -> None:  # type: ignore[no-untyped-def]
    t = _teleop(bound, "wb6")
    for _ in range(5):
        t.apply(Command(linear=(0.2, 0.0, 0.0)))
    t.apply(Command())  # let it come to rest under a constant target
    t.apply(Command())
    target, grip = t.target, t.grip
    ctrl = t.world.data.ctrl.copy()
    site = t.world.data.site_xpos[t.world.scene.arm.site_id].copy()
    for _ in range(8):
        rep = t.apply(Command(linear=(0.0, 0.3, -0.3), angular=(0, 0, 1.0), grip=1.0,
                              clutch=False))  # fmt: skip
        assert not rep.action[:6].any() and rep.action[6] == grip
    assert np.array_equal(t.target[0], target[0]) and np.array_equal(t.target[1], target[1])
    assert np.array_equal(t.world.data.ctrl, ctrl)
    moved = t.world.data.site_xpos[t.world.scene.arm.site_id] - site
    assert float(np.max(np.abs(moved))) < 2e-3
    # engaged again, the same command moves it
    for _ in range(4):
        t.apply(Command(linear=(0.0, 0.2, 0.0)))
    assert t.world.data.site_xpos[t.world.scene.arm.site_id][1] > site[1] + 0.05


def test_speed_scales_and_maxima_clip_the_applied_action(bound) -> None:  # type: ignore[no-untyped-def]
    t = _teleop(bound, "wb6")
    assert t.apply(Command(linear=(0.1, 0, 0), speed=0.5)).action[0] == pytest.approx(0.05)
    fast = t.apply(Command(linear=(3.0, 4.0, 0), angular=(0, 0, 9.0))).action
    assert float(np.linalg.norm(fast[:3])) == pytest.approx(t.max_linear)
    assert fast[5] == pytest.approx(t.max_angular)


def test_the_workspace_box_clamps_and_says_which_face(bound) -> None:  # type: ignore[no-untyped-def]
    t = _teleop(bound, "wb6")
    lo, _ = t.workspace
    faces: set[str] = set()
    for _ in range(40):  # 0.25 m/s down for 4 s: far below the table top
        faces |= set(t.apply(Command(linear=(0, 0, -0.25))).limits)
    assert faces == {"workspace z min"}
    assert t.target[0][2] == pytest.approx(lo[2])
    z = t.world.data.site_xpos[t.world.scene.arm.site_id][2]
    assert z > lo[2] - 0.005  # the fingertips stay above the table


def test_joint_limits_hold_the_arm_without_winding_up(bound) -> None:  # type: ignore[no-untyped-def]
    big = (np.array([-5.0, -5.0, 0.0]), np.array([5.0, 5.0, 5.0]))
    world = make_world(bound, "physics", arm="wb6")
    assert isinstance(world, PhysicsWorld)
    world.reset(1)
    t = Teleop(world, workspace=big)
    held: set[str] = set()
    for _ in range(60):  # straight up, far past the arm's reach
        held |= set(t.apply(Command(linear=(0, 0, 0.25))).limits)
    assert held and all(h.startswith("joint ") or h == "reach" for h in held)
    q = world.data.qpos[list(world.scene.arm.qpos_adr)]
    assert np.all(q >= t.kin.lo - 0.01) and np.all(q <= t.kin.hi + 0.01)
    # no wind-up: the first step back down moves the target down at once
    z = t.target[0][2]
    t.apply(Command(linear=(0, 0, -0.1)))
    assert t.target[0][2] < z


def test_record_rerecord_store_load_replay(bound, tmp_path) -> None:  # type: ignore[no-untyped-def]
    project = Project.create(tmp_path / "p")
    rec = Recorder(bound, "wb6")
    rec.start()
    op = Operator(rec.teleop, rec.step)
    pick_and_place(op, "brick_red", "brick_blue")
    rec.mark(Span(10, 20, who="alice", why="the agent hovered"))
    first = rec.next()
    assert first.success and first.steps == op.steps and first.spans[0].who == "alice"
    for _ in range(6):
        rec.step(Command(linear=(0.1, 0, 0)))
    rec.rerecord()  # discard those six: the next demonstration starts over from the reset
    assert rec.steps == 0
    assert np.array_equal(rec.world.data.qpos, _reset_qpos(bound))
    for _ in range(5):
        rec.step(Command(linear=(0, 0.1, -0.05), grip=0.5))
    demos = rec.stop()
    rec.close()
    assert [d.name for d in demos] == ["demo_0", "demo_1"]
    second = demos[1]
    assert second.steps == 5 and not second.success
    assert np.array_equal(second.states[0], first.states[0])  # the same seeded reset
    assert second.actions[0, 6] == 0.5 and second.actions[0, 2] == -0.05

    ids = [store_demonstration(project, d) for d in demos]
    assert {e.id for e in list_demonstrations(project)} == set(ids)
    back = load_demonstration(project, ids[0])
    for name in ("timestamps", "joint_pos", "actions", "states", "ee_pos", "ee_quat"):
        assert np.array_equal(getattr(back, name), getattr(first, name)), name
    assert back.graphs == first.graphs and back.model_xml == first.model_xml
    assert back.spans == first.spans and back.success
    ep = project.episodes.get(ids[0])
    assert ep.agent == "teleop" and ep.ticks == first.steps - 1
    assert [c.value for c in project.episodes.conditions(ids[0])] == ["T"]

    for eid, demo in zip(ids, demos, strict=True):
        report = replay_demonstration(project, eid)
        assert report.identical and report.compared == demo.steps


def test_replay_names_the_first_step_that_diverges(bound, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    project = Project.create(tmp_path / "p")
    rec = Recorder(bound, "wb6")
    rec.start()
    for _ in range(8):
        rec.step(Command(linear=(0.1, 0.0, 0.0)))
    demo = rec.stop()[0]
    rec.close()
    actions = demo.actions.copy()
    actions[4, 0] = 0.2  # a different command at step 4: step 5's state differs
    eid = store_demonstration(project, dataclasses.replace(demo, actions=actions))
    report = replay_demonstration(project, eid)
    assert report.first_divergent == 5 and report.max_abs_diff > 0


def _reset_qpos(bound) -> np.ndarray:  # type: ignore[no-untyped-def]
    world = make_world(bound, "physics", arm="wb6")
    world.reset(bound.scenario.seed)
    assert isinstance(world, PhysicsWorld)
    return world.data.qpos.copy()


def test_camera_frames_are_recorded_and_stored_as_video(bound, tmp_path) -> None:  # type: ignore[no-untyped-def]
    project = Project.create(tmp_path / "p")
    rec = Recorder(bound, "wb6", cameras=("front",), size=(320, 240))
    rec.start()
    for _ in range(3):
        rec.step(Command(linear=(0.0, 0.1, 0.0)))
    demo = rec.stop()[0]
    rec.close()
    assert demo.frames["front"].shape == (3, 240, 320, 3)
    assert not np.array_equal(demo.frames["front"][0], demo.frames["front"][2])  # it moved
    eid = store_demonstration(project, demo)
    kinds = {(a.kind, a.camera, a.frames) for a in project.episodes.artifacts(eid)}
    assert kinds == {("demo", "", 3), ("video", "front", 3)}
    assert np.array_equal(load_demonstration(project, eid).frames["front"], demo.frames["front"])
