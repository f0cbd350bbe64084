"""Every run ends in a state that says what happened (issue 25): a run that raises is stored
``failed`` with the error, Ctrl+C ``cancelled`` ("interrupted"), an agent that gives up
``aborted`` with its reason — each with the ticks it recorded, and each replays and exports."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from sim.episode import (
    AgentStop,
    BaseSink,
    EpisodeResult,
    EpisodeRunner,
    ExchangeLog,
    Observation,
    ScriptedAgent,
    Sink,
    open_scenario,
    replay_episode,
    run_episode,
)
from sim.review import export_bundle
from sim.scenario import BoundScenario
from sim.world import Action, World
from storage import EpisodeError, Project


class Flaky(ScriptedAgent):
    """The reference plan, until it raises ``error`` when asked at tick ``at``; it talks to
    something outside (one exchange per decision), as a model-backed agent does."""

    name = "flaky"

    def __init__(self, bound: BoundScenario, at: int, error: BaseException, log: ExchangeLog):
        super().__init__(bound.reference)
        self.at, self.error, self.log = at, error, log

    def decide(self, obs: Observation) -> list[Action]:
        self.log.add(obs.tick, {"tick": obs.tick}, None if obs.tick == self.at else {"ok": 1})
        if obs.tick == self.at:
            raise self.error
        return super().decide(obs)


class GivesUp(ScriptedAgent):
    """Stops at tick 3 without doing the task, saying why."""

    name = "quitter"

    def __init__(self, bound: BoundScenario) -> None:
        super().__init__(bound.reference)
        self.stopped: AgentStop | None = None

    @property
    def done(self) -> bool:
        return self.stopped is not None

    def decide(self, obs: Observation) -> list[Action]:
        if obs.tick == 3:
            self.stopped = AgentStop("aborted", "the agent gave up: it saw no brick")
        return []


def _run(root: Path, make: Any, extra: Sequence[Sink] = ()) -> tuple[Project, str | None, Any]:
    """Run stack-two (symbolic) with the agent ``make(bound, log)`` builds; returns the
    project, the stored episode's id and what the run raised (None)."""
    project = Project.create(root)

    def factory(bound: BoundScenario, _world: World, log: ExchangeLog) -> Any:
        return make(bound, log), []

    raised: BaseException | None = None
    try:
        ep = run_episode(open_scenario("stack-two"), mode="symbolic", agent="flaky",
                         agent_factory=factory, project=project, extra_sinks=extra)  # fmt: skip
        eid = ep.episode_id
    except BaseException as err:
        raised = err
        (row,) = project.episodes.list()
        eid = row.id
    return project, eid, raised


def _replays_and_exports(project: Project, eid: str, tmp_path: Path) -> dict[str, Any]:
    report = replay_episode(project, eid)
    assert report.identical and report.compared == project.episodes.get(eid).ticks + 1
    out = export_bundle(project, eid, tmp_path / "bundle")
    meta: dict[str, Any] = json.loads((out / "episode.json").read_text("utf-8"))
    return meta


def test_a_run_that_raises_is_stored_failed_with_its_ticks_and_exchanges(tmp_path: Path) -> None:
    boom = RuntimeError("the arm driver crashed")
    project, eid, raised = _run(tmp_path / "p", lambda b, log: Flaky(b, 12, boom, log))
    with project:
        assert raised is boom and eid is not None
        assert f"episode {eid[:8]} was stored as failed after 12 ticks" in boom.__notes__
        ep = project.episodes.get(eid)
        assert (ep.status.value, ep.ticks) == ("failed", 12)
        assert ep.end_reason == "RuntimeError: the arm driver crashed"
        assert len(project.episodes.hashes(eid)) == 13  # ticks 0..12, every one recorded
        xs = project.episodes.exchanges(eid)
        assert [x.tick for x in xs] == list(range(13))  # every exchange, the failing one too
        assert xs[-1].received_json is None
        assert project.episodes.metrics(eid)["success"] == 0.0
        meta = _replays_and_exports(project, eid, tmp_path)
    assert meta["status"] == "failed" and meta["end_reason"] == ep.end_reason


def test_ctrl_c_is_stored_cancelled_as_interrupted(tmp_path: Path) -> None:
    stop = KeyboardInterrupt()
    project, eid, raised = _run(tmp_path / "p", lambda b, log: Flaky(b, 7, stop, log))
    with project:
        assert raised is stop and eid is not None
        ep = project.episodes.get(eid)
        assert (ep.status.value, ep.ticks, ep.end_reason) == (
            "cancelled", 7, "interrupted (Ctrl+C)")  # fmt: skip
        assert len(project.episodes.exchanges(eid)) == 8
        meta = _replays_and_exports(project, eid, tmp_path)
    assert meta["status"] == "cancelled"


def test_an_agent_that_gives_up_ends_aborted_with_its_reason(tmp_path: Path) -> None:
    project, eid, raised = _run(tmp_path / "p", lambda b, _log: GivesUp(b))
    with project:
        assert raised is None and eid is not None
        ep = project.episodes.get(eid)
        assert (ep.status.value, ep.ticks) == ("aborted", 4)
        assert ep.end_reason == "the agent gave up: it saw no brick"
        meta = _replays_and_exports(project, eid, tmp_path)
    assert meta["status"] == "aborted"


class BrokenEnd(BaseSink):
    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None:
        raise OSError("disk full")


def test_a_sink_that_cannot_store_its_end_leaves_no_episode_running(tmp_path: Path) -> None:
    boom = OSError("disk full")
    project, eid, raised = _run(
        tmp_path / "p", lambda b, _log: ScriptedAgent(b.reference), extra=[BrokenEnd()]
    )
    with project:
        assert isinstance(raised, OSError) and str(raised) == str(boom) and eid is not None
        ep = project.episodes.get(eid)
        assert ep.status.value == "failed" and ep.ticks > 0
        assert ep.end_reason == "storing its end failed: OSError: disk full"


def test_an_episode_left_running_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    """A row a run left ``running`` before runs said how they end (or one being recorded)."""
    bound = open_scenario("stack-two")
    with Project.create(tmp_path / "p") as project:
        eid = project.episodes.create(
            scenario=bound.name, scenario_sha=bound.scenario.digest, family="stack",
            mode="symbolic", agent="llm", seed=1, delta=0.5, contract_json="{}",
            contract_hash="x", config={"source": "stack-two"},
        )  # fmt: skip
        assert project.episodes.get(eid).status.value == "running"
        with pytest.raises(EpisodeError, match=r"still marked running.*cannot replay it"):
            replay_episode(project, eid)
        with pytest.raises(EpisodeError, match="cannot export it as a bundle"):
            export_bundle(project, eid, tmp_path / "b")
