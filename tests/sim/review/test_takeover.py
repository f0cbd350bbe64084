"""Takeovers inside a live physics episode, and demonstrations opened in the episode workspace.

A person takes the arm over through the live run's API, drives it for a few ticks and hands it
back: the agent is held meanwhile (nothing of it is submitted, so nothing is refused), the span
(who, when, why) is stored with the episode when the takeover starts and when it ends (also
when the run stops mid-takeover), it is an item on the timeline's ``takeovers`` track and a
line in the exported Rerun trace, and replay refuses the episode. A stored demonstration opens
through ``load_timeline`` with its own spans on that track, and the world cursor restores its
recorded MuJoCo state at any step.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import pytest

from sim.episode import (
    EpisodeRunner,
    ScriptedAgent,
    SqliteSink,
    make_world,
    open_scenario,
    replay_episode,
)
from sim.review import FrameThread, LiveRun, WorldCursor, export_rerun, load_timeline
from sim.teleop import Command, Recorder, Span, store_demonstration
from storage import EpisodeError, Project
from tests.sim.review.test_rerun_export import Rrd

STATE = mujoco.mjtState.mjSTATE_INTEGRATION


def wait_for(cond: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def build_stack(project: Project) -> tuple[EpisodeRunner, Any]:
    bound = open_scenario("stack-two")
    world = make_world(bound, "physics")
    db = SqliteSink(project, agent="scripted", mode="physics", batch=1)
    return EpisodeRunner(world, bound, ScriptedAgent(bound.reference), sinks=[db]), None


def ee(runner: EpisodeRunner) -> np.ndarray:
    w: Any = runner.world
    return np.array(w.data.site_xpos[w.scene.arm.site_id])


def takeovers(root: Path, eid: str) -> list[dict[str, Any]]:
    with Project.open(root) as p:
        return list(p.episodes.get(eid).config.get("takeovers") or [])


@pytest.fixture(scope="module")
def taken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, LiveRun]:
    """A stack-two live episode: alice takes over at tick 0 for 6 ticks, hands back; the agent
    acts; bob asks for the arm mid-action, gets it when the action is done, and the run is
    stopped while he has it."""
    root = tmp_path_factory.mktemp("takeover") / "p"
    Project.create(root).close()
    live = LiveRun(root, build_stack)
    assert live.ready.wait(120) and live.error is None
    runner = live.runner
    assert runner is not None
    eid = live.episode_id
    assert eid is not None
    live.take_over("alice", "the agent hovered")
    wait_for(lambda: live.teleop is not None)
    # stored at once, before a single tick under the person's hand
    assert takeovers(root, eid) == [
        {"start": 0, "end": 0, "who": "alice", "why": "the agent hovered"}
    ]
    start = ee(runner)
    live.command(Command(linear=(0.1, 0.0, 0.0)))
    live.step(6)
    wait_for(lambda: live.tick == 6)
    moved = ee(runner) - start
    assert moved[0] > 0.01 and abs(moved[1]) < 0.005  # the arm went +x, as commanded
    assert runner.actions == []  # the agent was held: nothing submitted, nothing refused
    live.hand_back()
    wait_for(lambda: live.teleop is None)
    assert takeovers(root, eid) == [
        {"start": 0, "end": 6, "who": "alice", "why": "the agent hovered"}
    ]
    live.step(3)
    wait_for(lambda: live.tick == 9)
    assert runner.actions and all(a.verdict is not None and a.verdict.accepted
                                  for a in runner.actions)  # fmt: skip
    assert runner.world.busy  # the agent's first action is under way: bob must wait
    live.take_over("bob")
    wait_for(lambda: live.taken_over)
    submitted = len(runner.actions)
    live.play(0)  # as fast as it goes, until the action is done and bob has the arm
    wait_for(lambda: live.teleop is not None)
    live.step(2)  # (pauses) two ticks under bob's hand
    first = live.takeovers[-1].start
    wait_for(lambda: live.tick >= first + 2)
    assert len(runner.actions) == submitted  # held all along: no new action
    assert first > 9 and not runner.world.busy
    live.stop()  # mid-takeover: the span is closed where the run stopped
    assert live.error is None
    return root, eid, live


def test_a_takeover_is_stored_when_it_starts_and_ends_and_after_a_stop(
    taken: tuple[Path, str, LiveRun],
) -> None:
    root, eid, live = taken
    spans = takeovers(root, eid)
    assert spans[0] == {"start": 0, "end": 6, "who": "alice", "why": "the agent hovered"}
    bob = spans[1]
    assert bob["who"] == "bob" and bob["why"] == "took over"
    assert bob["start"] == live.takeovers[1].start and bob["end"] == live.tick
    assert bob["end"] >= bob["start"] + 2


def test_a_takeover_is_a_span_on_the_timeline_and_replay_refuses_it(
    taken: tuple[Path, str, LiveRun],
) -> None:
    root, eid, live = taken
    with Project.open(root) as p:
        tl = load_timeline(p, eid)
        items = tl.on("takeovers")
        assert [(i.start, i.end, i.kind) for i in items] == [
            (0, 6, "takeover"), (live.takeovers[1].start, live.tick, "takeover"),
        ]  # fmt: skip
        assert "alice" in items[0].label and "the agent hovered" in items[0].label
        assert "bob" in items[1].label
        with pytest.raises(EpisodeError, match="alice took the arm over at tick 0"):
            replay_episode(p, eid)


def test_a_takeover_is_in_the_exported_rerun_trace(
    taken: tuple[Path, str, LiveRun], tmp_path: Path
) -> None:
    root, eid, live = taken
    with Project.open(root) as p:
        export_rerun(p, eid, tmp_path / "ep.rrd")
    lines = Rrd(tmp_path / "ep.rrd").texts("/takeovers")
    bob = live.takeovers[1].start
    assert [(t, lv) for t, _, lv in lines] == [(0, "WARN"), (6, "INFO"), (bob, "WARN"),
                                               (live.tick, "INFO")]  # fmt: skip
    assert "alice" in lines[0][1] and "ticks 0–6" in lines[0][1]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Any]:
    """A short demonstration of stack-two (move, descend, close the jaws, lift) with a span."""
    root = tmp_path_factory.mktemp("demo") / "p"
    Project.create(root).close()
    rec = Recorder(open_scenario("stack-two"), "wb6")
    try:
        rec.start()
        plan = [
            (Command(linear=(0.1, 0.05, 0.0)), 8), (Command(linear=(0, 0, -0.1)), 6),
            (Command(grip=1.0), 5), (Command(linear=(0, 0, 0.1), angular=(0, 0, 0.5)), 6),
        ]  # fmt: skip
        for cmd, n in plan:
            for _ in range(n):
                rec.step(cmd)
        rec.mark(Span(8, 18, who="carol", why="showing the approach"))
        (recorded,) = rec.stop()
    finally:
        rec.close()
    with Project.open(root) as p:
        eid = store_demonstration(p, recorded)
    return root, eid, recorded


def test_a_demonstration_opens_with_its_spans_on_the_takeovers_track(
    demo: tuple[Path, str, Any],
) -> None:
    root, eid, recorded = demo
    with Project.open(root) as p:
        tl = load_timeline(p, eid)
    assert tl.ticks == recorded.steps - 1
    (item,) = tl.on("takeovers")
    assert (item.start, item.end, item.kind) == (8, 18, "takeover")
    assert "carol" in item.label and "showing the approach" in item.label


def test_the_world_cursor_reproduces_a_demonstrations_states(demo: tuple[Path, str, Any]) -> None:
    root, eid, recorded = demo
    with Project.open(root) as p:
        cursor = WorldCursor(p, eid)
    try:
        world: Any = cursor.world
        state = np.zeros(mujoco.mj_stateSize(world.model, STATE))
        steps = list(range(recorded.steps))
        random.Random(14).shuffle(steps)  # jumps back and forth, as a scrubbing playhead
        for t in [*steps[:12], 0, recorded.steps - 1]:
            assert cursor.seek(t) == t
            mujoco.mj_getState(world.model, world.data, state, STATE)
            assert np.array_equal(state, recorded.states[t]), t
            assert cursor.faithful
            site = world.data.site_xpos[world.scene.arm.site_id]
            assert np.allclose(site, recorded.ee_pos[t], atol=1e-9)
        assert cursor.seek(10_000) == recorded.steps - 1  # clamped to the demonstration
    finally:
        cursor.close()


def test_a_demonstration_renders_in_the_frame_thread_and_exports_to_rerun(
    demo: tuple[Path, str, Any], tmp_path: Path
) -> None:
    root, eid, _ = demo
    frames: list[Any] = []
    errors: list[BaseException] = []
    thread = FrameThread(root, eid, frames.append, errors.append, size=(160, 120))
    try:
        assert thread.ready.wait(120) and not errors
        thread.request(12, thread.cameras[0])
        wait_for(lambda: bool(frames) or bool(errors))
        assert not errors and frames[0].tick == 12 and frames[0].image.shape == (120, 160, 3)
    finally:
        thread.close()
    with Project.open(root) as p:
        out = export_rerun(p, eid, tmp_path / "demo.rrd")
    assert out.poses == "replayed" and "recorded MuJoCo states" in out.poses_note
    lines = Rrd(tmp_path / "demo.rrd").texts("/takeovers")
    assert [t for t, _, _ in lines] == [8, 18] and "carol" in lines[0][1]
