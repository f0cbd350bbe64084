"""Pushing a body by hand in a live physics episode: MuJoCo's mouse spring moves what was
grabbed (and only while held), the episode is marked as perturbed when the push starts, and
replay and fork then refuse it with a message naming the tick."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sim.episode import EpisodeRunner, make_world, open_scenario, replay_episode
from sim.interact import build_interactive, replay_interactive
from sim.mujoco import PhysicsWorld, Push
from sim.review import LiveFrames, LiveRun, fork_build
from sim.users import PROFILES
from storage import EpisodeError, Project

SIZE = (320, 240)


def wait_for(cond: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def world_at_rest() -> PhysicsWorld:
    bound = open_scenario("cook-patty")
    world = make_world(bound, "physics")
    assert isinstance(world, PhysicsWorld)
    world.reset(bound.scenario.seed)
    return world


def grab_something(world: PhysicsWorld) -> tuple[Push, tuple[float, float]]:
    """Scan the top camera's picture for a movable object (what a click would find)."""
    world.render("top", *SIZE)
    for rely in np.linspace(0.1, 0.9, 17):
        for relx in np.linspace(0.1, 0.9, 17):
            push = world.grab("top", float(relx), float(rely), *SIZE)
            if push is not None:
                return push, (float(relx), float(rely))
    raise AssertionError("no movable object under the top camera")


def test_a_push_moves_the_grabbed_object_toward_the_target_and_stops_when_released() -> None:
    pushed, still = world_at_rest(), world_at_rest()
    try:
        push, _ = grab_something(pushed)
        assert push.obj in pushed.graph.nodes and push.localmass > 0
        # the mouse drags "up" in the top camera's vertical plane (Shift: the table's plane)
        target = pushed.drag(push, "top", 0.0, 0.15, *SIZE, horizontal=True)
        assert np.linalg.norm(np.subtract(target.refselpos, push.refselpos)) > 0.01
        before = np.array(pushed.graph.nodes[push.obj].pos)
        pushed.push(target)
        for _ in range(10):
            pushed.tick()
            still.tick()
        moved = np.array(pushed.graph.nodes[push.obj].pos)
        rest = np.array(still.graph.nodes[push.obj].pos)
        assert np.linalg.norm(rest - before) < 0.005  # without a push it stays put
        toward = np.subtract(target.refselpos, push.refselpos)[:2]
        step = (moved - before)[:2]
        assert float(np.dot(step, toward)) > 0.5 * 0.01 * np.linalg.norm(toward)  # pulled along
        pushed.push(None)
        assert not pushed.data.xfrc_applied.any()
        after_release = pushed.state_hash()
        assert after_release != still.state_hash()
    finally:
        pushed.close()
        still.close()


def test_nothing_fixed_can_be_grabbed() -> None:
    world = world_at_rest()
    try:
        world.render("top", *SIZE)
        assert world.grab("top", 0.01, 0.99, *SIZE) is None  # the room's corner, not an object
    finally:
        world.close()


def build_physics(project: Project) -> tuple[EpisodeRunner, Any]:
    ep = build_interactive(open_scenario("cook-patty"), mode="physics",
                           persona=PROFILES["balanced"], user="rule", project=project)  # fmt: skip
    return ep.runner, ep


def test_a_live_push_marks_the_episode_and_replay_and_fork_refuse_it(tmp_path: Path) -> None:
    root = tmp_path / "p"
    Project.create(root).close()
    bound = open_scenario("cook-patty")
    pushes: list[Push | None] = []
    probe = world_at_rest()
    try:
        _, spot = grab_something(probe)  # where a click finds an object, before anything moved
    finally:
        probe.close()
    frames = LiveFrames(lambda: make_world(bound, "physics"), lambda _f: None, pytest.fail,
                        size=SIZE)  # fmt: skip
    live = LiveRun(
        root, build_physics, on_tick=lambda r: frames.publish(r.tick, r.world.snapshot())
    )
    try:
        assert live.ready.wait(120) and live.error is None
        live.step(3)
        wait_for(lambda: live.tick == 3)
        frames.request(3, "top")
        time.sleep(0.5)  # the frame is drawn, then gestures are measured against it
        frames.on_push = lambda p: (pushes.append(p), live.push(p))
        frames.grab("top", *spot)
        wait_for(lambda: len(pushes) == 1)
        assert pushes[0] is not None
        frames.drag("top", 0.0, -30.0, horizontal=True)
        wait_for(lambda: len(pushes) == 2)
        live.step(4)
        wait_for(lambda: live.tick == 7 or live.error is not None)
        assert live.error is None
        frames.release()
        wait_for(lambda: len(pushes) == 3 and pushes[-1] is None)
        live.step(2)
        wait_for(lambda: live.tick == 9)
        eid = live.episode_id
        assert eid is not None
        with Project.open(root) as p:
            assert p.episodes.get(eid).config["perturbed"] == [[3, 7]]
    finally:
        live.stop()
        frames.close()
    with Project.open(root) as p:
        ep = p.episodes.get(eid)
        assert ep.config["perturbed"] == [[3, 7]]
        with pytest.raises(EpisodeError, match="pushed by hand at tick 3"):
            replay_interactive(p, eid)
        with pytest.raises(EpisodeError, match="pushed by hand at tick 3"):
            replay_episode(p, eid)
        with pytest.raises(EpisodeError, match="cannot fork it past tick 3"):
            fork_build(p, eid, 5)
        fork_build(p, eid, 2)  # before the push the trace is still its decisions'
        with pytest.raises(EpisodeError, match="perturbed: expected tick spans"):
            p.episodes.mark_perturbed(eid, [(5, 2)])
        assert p.episodes.get(eid).config["perturbed"] == [[3, 7]]  # left as it was
