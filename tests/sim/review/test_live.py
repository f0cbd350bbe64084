"""A live episode on its own thread: step, run to a tick, play to the end; a person in the
user's seat talks to the assistant and acts, and the recorded episode replays exactly."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim.episode import EpisodeRunner, open_scenario
from sim.interact import HumanUser, build_interactive, replay_interactive
from sim.review import LiveRun
from sim.users import PROFILES
from storage import Project


def wait_for(cond: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def builder(user: str) -> Callable[[Project], tuple[EpisodeRunner, Any]]:
    def build(project: Project) -> tuple[EpisodeRunner, Any]:
        ep = build_interactive(open_scenario("cook-patty"), persona=PROFILES["balanced"],
                               user=user, project=project)  # fmt: skip
        return ep.runner, ep

    return build


def test_step_run_to_and_play(tmp_path: Path) -> None:
    root = tmp_path / "p"
    Project.create(root).close()
    live = LiveRun(root, builder("rule"))
    try:
        assert live.ready.wait(30) and live.error is None
        assert live.tick == 0 and not live.playing
        live.step(5)
        wait_for(lambda: live.tick == 5)
        time.sleep(0.1)
        assert live.tick == 5  # paused after the steps
        live.run_to(40)
        wait_for(lambda: live.tick == 40)
        live.play(speed=0)  # as fast as it goes
        wait_for(lambda: live.finished)
        assert live.rtf is not None and live.rtf > 1.0
    finally:
        live.stop()
    with Project.open(root) as p:
        (ep,) = p.episodes.list()
        assert ep.status.value == "completed" and p.episodes.metrics(ep.id)["success"] == 1.0


def test_paced_play_keeps_near_real_time(tmp_path: Path) -> None:
    root = tmp_path / "p"
    Project.create(root).close()
    live = LiveRun(root, builder("rule"))
    try:
        assert live.ready.wait(30)
        live.play(speed=4.0)  # 4× real time: 40 ticks of 0.1 s a second
        wait_for(lambda: live.tick >= 30)
        live.pause()
        rtf = live.rtf
        assert rtf is not None and rtf <= 4.0 * 1.25  # paced, not free-running
    finally:
        live.stop()
    with Project.open(root) as p:  # stopping mid-run keeps a whole, cancelled episode
        (ep,) = p.episodes.list()
        assert ep.status.value == "cancelled"


def test_a_person_in_the_user_seat(tmp_path: Path) -> None:
    root = tmp_path / "p"
    Project.create(root).close()
    live = LiveRun(root, builder("human"))
    try:
        assert live.ready.wait(30)
        human = live.extra.agent.user
        assert isinstance(human, HumanUser)
        live.step(3)
        wait_for(lambda: live.tick == 3)
        human.say("What should I start with?")
        live.step(6)
        wait_for(lambda: live.tick == 9)
        heard = [t.text for t in live.extra.agent.conversation if t.speaker == "assistant"]
        assert any("pick up the patty" in h.lower() for h in heard), heard
        human.do("pick up the patty")
        live.step(3)
        wait_for(lambda: live.tick == 12)
        assert [a.action.describe() for a in live.runner.actions] == ["pick up the patty"]
        human.do("put the patty in the pan")
        human.do("turn on the burner")
        live.play(speed=0)
        patty = lambda: float(live.runner.world.graph.nodes["patty"].attrs.get("cooked", 0))  # noqa: E731
        wait_for(lambda: patty() >= 1.0)
        live.pause()
        human.do("turn off the burner")
        human.done()
        live.play(speed=0)
        wait_for(lambda: live.finished)
    finally:
        live.stop()
    with Project.open(root) as p:
        (ep,) = p.episodes.list()
        said = [t.text for t in p.episodes.turns(ep.id) if t.speaker == "user"]
        assert "What should I start with?" in said
        assert p.episodes.metrics(ep.id)["success"] == 1.0
        assert replay_interactive(p, ep.id).identical  # the person's turns were recorded
