"""Trace sinks: rows in the project's SQLite file and an MP4 of any camera.

The SQLite sink batches ticks (one transaction per ``batch`` ticks) so recording costs little
per tick; actions are written when submitted and rewritten when their outcome arrives. A
deferred sink writes nothing while the episode runs and needs no project until it is
committed: :meth:`SqliteSink.deferred` is the finished episode as plain, picklable data
(:class:`DeferredEpisode`), which a job run on another machine sends back to the one process
that holds the project.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.episode._trace import ActionEntry, AnomalyEntry, EpisodeResult, TickEntry
from sim.scenario import schedule_to_json
from sim.synthetic import Mp4Writer
from storage import (
    ActionRecord,
    ActionSource,
    AnomalyRecord,
    ConditionRecord,
    EpisodeStatus,
    EventRecord,
    ExchangeRecord,
    Project,
    TickRecord,
    TurnRecord,
)

if TYPE_CHECKING:
    from sim.episode._runner import EpisodeRunner


#: ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` with the encoder built once
#: (dumps builds one per call for any non-default argument, three times a recorded tick)
_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


def action_record(e: ActionEntry) -> ActionRecord:
    v = e.verdict
    return ActionRecord(
        idx=e.idx,
        tick=e.tick,
        source=ActionSource(e.source),
        text=e.action.describe(),
        action_json=_dumps(e.action.to_json()),
        accepted=bool(v and v.accepted),
        failed_json=_dumps([c.to_json() for c in v.failed]) if v else "[]",
        grounded_json=_dumps(v.grounded.to_json()) if v and v.grounded else None,
        outcome=e.outcome,
        finished_tick=e.finished_tick,
    )


def motion_version() -> int:
    """The arm controller's motion version (imports MuJoCo: physics episodes only)."""
    from sim.mujoco import MOTION_VERSION

    return int(MOTION_VERSION)


@dataclass
class DeferredEpisode:
    """A finished episode not yet stored: every row it will write, as plain data (picklable,
    no project). :meth:`commit` stores it whole, in the caller's transaction."""

    create: dict[str, Any]  # the arguments of ``episodes.create``
    finish: dict[str, Any]  # and of ``episodes.finish``
    ticks: list[TickRecord]
    actions: list[ActionRecord]
    anomalies: list[AnomalyRecord]
    snapshots: list[tuple[int, str]]
    #: the conversation (an interactive episode) or the agent's exchanges (a model or
    #: external agent): written after the trace, before the episode is marked finished
    turns: list[TurnRecord] = field(default_factory=list)
    exchanges: list[ExchangeRecord] = field(default_factory=list)
    events: list[EventRecord] | None = None  # an interactive episode's schedule, resolved

    def commit(self, project: Project, also: Callable[[str], None] | None = None) -> str:
        """Store the episode (joins the caller's transaction); returns its id. ``also(id)``
        runs before the episode is marked finished."""
        episodes = project.episodes
        episode_id = episodes.create(**self.create)
        if self.ticks or self.actions or self.anomalies:
            episodes.append(episode_id, ticks=self.ticks, actions=self.actions,
                            anomalies=self.anomalies, snapshots=self.snapshots)  # fmt: skip
        if self.turns or self.exchanges:
            episodes.append(episode_id, turns=self.turns, exchanges=self.exchanges)
        if self.events is not None:
            episodes.set_events(episode_id, self.events)
        if also is not None:
            also(episode_id)
        episodes.finish(episode_id, **self.finish)
        return episode_id


class SqliteSink:
    """Writes an episode into ``project.episodes``; ``episode_id`` is set at start."""

    def __init__(
        self,
        project: Project | None,
        *,
        agent: str,
        mode: str,
        reference: bool = False,
        config: dict[str, Any] | None = None,
        parent_id: str | None = None,
        fork_tick: int | None = None,
        batch: int = 25,
        defer: bool = False,
    ) -> None:
        """``defer``: keep the whole episode in memory and write nothing until :meth:`commit`
        (a job stores its episode in the transaction that marks it done: exactly once); only
        a deferred sink may have no ``project`` (it is given at :meth:`commit`)."""
        if project is None and not defer:
            raise ValueError("a SqliteSink without a project must be deferred")
        self.project = project
        self.defer = defer
        self._create: dict[str, Any] | None = None
        self._finish: dict[str, Any] | None = None
        self.agent = agent
        self.mode = mode
        self.reference = reference
        self.config = dict(config or {})
        if mode == "physics":  # what replay must match to reproduce the arm's every tick
            self.config["motion"] = motion_version()
        self.parent_id = parent_id
        self.fork_tick = fork_tick
        self.batch = batch
        self.episode_id: str | None = None
        self._ticks: list[TickRecord] = []
        self._actions: dict[int, ActionRecord] = {}
        self._anomalies: list[AnomalyRecord] = []
        self._snapshots: list[tuple[int, str]] = []

    def start(self, runner: EpisodeRunner) -> None:
        if self.episode_id is not None or self._create is not None:
            return
        s = runner.scenario
        self._create = dict(
            scenario=s.name,
            scenario_sha=s.scenario.digest,
            family=s.scenario.family,
            mode=self.mode,
            agent=self.agent,
            seed=runner.seed,
            delta=runner.world.delta,
            contract_json=s.contract.canonical_json,
            contract_hash=s.contract.digest,
            config={
                "source": s.source,
                "anomaly_schedule": schedule_to_json(runner.schedule),
                **self.config,
            },
            parent_id=self.parent_id,
            fork_tick=self.fork_tick,
            reference=self.reference,
        )
        if not self.defer:
            self.episode_id = self._project().episodes.create(**self._create)

    def record(
        self,
        runner: EpisodeRunner,
        tick: TickEntry,
        actions: Sequence[ActionEntry],
        anomalies: Sequence[AnomalyEntry],
        snapshot: dict[str, Any] | None,
    ) -> None:
        self._ticks.append(
            TickRecord(
                tick=tick.tick,
                state_hash=tick.state_hash,
                diff_json=_dumps(tick.diff),
                controller_json=_dumps(tick.controller),
                graph_json=_dumps(tick.graph) if tick.graph is not None else None,
            )
        )
        for a in actions:
            self._actions[a.idx] = action_record(a)
        for an in anomalies:
            params = an.anomaly.to_json()
            self._anomalies.append(
                AnomalyRecord(
                    idx=an.idx,
                    kind=an.anomaly.kind,
                    obj=an.anomaly.obj,
                    params_json=_dumps(params),
                    tick=an.tick,
                    trigger_json=_dumps(an.trigger),
                )
            )
        if snapshot is not None:
            self._snapshots.append((tick.tick, _dumps(snapshot)))
        if len(self._ticks) >= self.batch and not self.defer:
            self.flush()

    def _project(self) -> Project:
        assert self.project is not None  # only a deferred sink has none, and it never writes
        return self.project

    def flush(self) -> None:
        if self.episode_id is None or not (self._ticks or self._actions or self._anomalies):
            return
        self._project().episodes.append(
            self.episode_id,
            ticks=self._ticks,
            actions=list(self._actions.values()),
            anomalies=self._anomalies,
            snapshots=self._snapshots,
        )
        self._ticks, self._actions, self._anomalies, self._snapshots = [], {}, [], []

    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None:
        self.flush()
        predicates = runner.scenario.contract.predicates
        conditions = [
            ConditionRecord(
                idx=c.index,
                predicate_json=_dumps(predicates[c.index].to_json()),
                text=c.predicate_text,
                value=c.value.value,
                witness_tick=c.witness_tick,
            )
            for c in result.conditions
        ]
        self._finish = dict(
            status=EpisodeStatus(result.status),
            ticks=result.ticks,
            t_ref=result.ticks if self.reference and result.status == "completed" else None,
            conditions=conditions,
            metrics=result.metrics,
            end_reason=result.end_reason,
        )
        if not self.defer:
            assert self.episode_id is not None
            self._project().episodes.finish(self.episode_id, **self._finish)

    def deferred(self, **rest: Any) -> DeferredEpisode:
        """The finished deferred episode as data; ``rest``: the other sinks' rows (``turns``,
        ``exchanges``, ``events`` of :class:`DeferredEpisode`)."""
        if not self.defer or self._create is None or self._finish is None:
            raise RuntimeError("deferred() is for a deferred sink whose episode has finished")
        return DeferredEpisode(
            create=self._create, finish=self._finish, ticks=self._ticks,
            actions=list(self._actions.values()), anomalies=self._anomalies,
            snapshots=self._snapshots, **rest,
        )  # fmt: skip

    def commit(self, project: Project, also: Callable[[str], None] | None = None) -> str:
        """Write a deferred, finished episode whole (joins the caller's transaction).

        ``also(episode_id)`` runs after the trace and before the episode is marked finished
        (other sinks' rows, e.g. the conversation).
        """
        if not self.defer or self._create is None or self._finish is None:
            raise RuntimeError("commit() is for a deferred sink whose episode has finished")
        self.project = project
        self.episode_id = self.deferred().commit(project, also)
        self.defer = False
        self._ticks, self._actions, self._anomalies, self._snapshots = [], {}, [], []
        return self.episode_id


class VideoSink:
    """Renders one camera after every tick and streams it into an MP4 (fps = 1/Δ).

    ``finish`` stores the file in the project's media (by sha256) when a SQLite sink that ran
    before it has an episode id.
    """

    def __init__(
        self,
        camera: str,
        *,
        path: Path | None = None,
        size: tuple[int, int] = (640, 480),
        db: SqliteSink | None = None,
    ) -> None:
        self.camera = camera
        self.size = size
        self.db = db
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="wb-episode-")
            path = Path(self._tmp.name) / f"{camera}.mp4"
        self.path = path
        self._writer: Mp4Writer | None = None
        self.fps = 10
        self.media_sha: str | None = None

    def start(self, runner: EpisodeRunner) -> None:
        if self._writer is None:
            self.fps = max(1, round(1.0 / runner.world.delta))
            self._writer = Mp4Writer(self.path, self.fps)

    def record(
        self,
        runner: EpisodeRunner,
        tick: TickEntry,
        actions: Sequence[ActionEntry],
        anomalies: Sequence[AnomalyEntry],
        snapshot: dict[str, Any] | None,
    ) -> None:
        assert self._writer is not None
        self._writer.write(runner.world.render(self.camera, *self.size))

    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None:
        assert self._writer is not None
        self._writer.close()
        if self.db is not None and self.db.episode_id is not None:
            assert self.db.project is not None  # it has an id: it writes as it goes
            self.media_sha = self.db.project.episodes.add_video(
                self.db.episode_id,
                self.path,
                camera=self.camera,
                fps=float(self.fps),
                frames=self._writer.count,
            )
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
