"""The episode engine: one tick loop for every world, agent and front end (DESIGN.md §6).

Each tick, in this order: due anomalies are injected; the agent observes and submits actions
into the queue; while the world is idle the queue head is submitted (a rejection is recorded and
the next one tried; an acceptance starts the arm); the world advances Δ; the trace records the
state hash, the graph diff and the controller; the run ends when the agent is done with an
empty queue and an idle world (``completed``) or a budget runs out.

The runner has an explicit run state (idle, running, paused, finished). ``pause``, ``cancel``
and ``step`` take effect at tick boundaries, so a GUI thread or a signal handler can call them
at any time. A run never stays half-ended: one that raises ends ``failed`` (or ``cancelled`` for
Ctrl+C) with what it recorded so far before the error goes on (:mod:`sim.episode._ending`), and
an agent that gives up ends it ``aborted`` (:class:`sim.episode.AgentStop`).

Everything that determines the future — world state, queue, agent state, counters — is in
:meth:`snapshot`, so an episode can be forked from any tick. The engine draws no random numbers
after ``reset(seed)``; an agent that does keeps its generator in ``state()``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, Protocol

from sim.contracts import Event, Truth
from sim.episode._agents import Agent, AgentStop, Observation
from sim.episode._ending import abnormal_end, describe
from sim.episode._result import episode_result
from sim.episode._trace import ActionEntry, AnomalyEntry, EpisodeResult, TickEntry
from sim.scenario import BoundScenario
from sim.world import Action, Outcome, SceneGraph, Verdict, World, diff

PHYSICS_SNAPSHOT_EVERY = 10  # ticks between stored snapshots of a physics episode


class RunState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"


class Sink(Protocol):
    """Receives the trace as it is produced (SQLite rows, a video encoder, a GUI)."""

    def start(self, runner: EpisodeRunner) -> None: ...

    def record(
        self,
        runner: EpisodeRunner,
        tick: TickEntry,
        actions: Sequence[ActionEntry],
        anomalies: Sequence[AnomalyEntry],
        snapshot: dict[str, Any] | None,
    ) -> None: ...

    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None: ...


class BaseSink:
    """A sink that ignores what it is not interested in: override the step you need."""

    def start(self, runner: EpisodeRunner) -> None:
        pass

    def record(
        self,
        runner: EpisodeRunner,
        tick: TickEntry,
        actions: Sequence[ActionEntry],
        anomalies: Sequence[AnomalyEntry],
        snapshot: dict[str, Any] | None,
    ) -> None:
        pass

    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None:
        pass


class EpisodeRunner:
    """Runs one scenario in one world with one agent; see the module docstring."""

    def __init__(
        self,
        world: World,
        scenario: BoundScenario,
        agent: Agent,
        *,
        seed: int | None = None,
        sinks: Sequence[Sink] = (),
        anomalies: bool = True,
        keyframe_every: int = 50,
        snapshot_every: int | None = None,
        end_tick: int | None = None,
        record: bool = True,
    ) -> None:
        self.world = world
        self.scenario = scenario
        self.agent = agent
        self.seed = scenario.scenario.seed if seed is None else seed
        self.sinks = list(sinks)
        self.schedule = scenario.anomalies if anomalies else ()
        self.keyframe_every = keyframe_every
        # Snapshots are where a seek or a fork resumes: a physics tick costs milliseconds to
        # replay, so physics keeps them denser than keyframes (a seek replays at most this many
        # ticks); the symbolic world replays a tick in microseconds.
        if snapshot_every is None:
            physics = getattr(world, "mode", "") == "physics"
            snapshot_every = PHYSICS_SNAPSHOT_EVERY if physics else keyframe_every
        self.snapshot_every = snapshot_every
        self.end_tick = end_tick
        #: keep the trace (state hash, graph diff, keyframes); off for throughput-only runs
        self.record = record
        if sinks and not record:
            raise ValueError("sinks need the trace: pass record=True")
        self.budgets = scenario.scenario.budgets
        self.state = RunState.IDLE
        self.result: EpisodeResult | None = None
        self.hashes: list[str] = []
        self.actions: list[ActionEntry] = []
        self.anomaly_log: list[AnomalyEntry] = []
        self.events: list[Event] = []
        self.on_tick: Callable[[EpisodeRunner, TickEntry], None] | None = None
        #: a person has the arm (a live takeover): the agent is not asked and its queue waits,
        #: while the world still ticks and the trace records; the episode cannot complete
        self.held = False
        self._queue: deque[ActionEntry] = deque()
        self._running: ActionEntry | None = None
        self._fired: set[int] = set()
        self._consecutive_rejections = 0
        self._attempts = 0  # submitted actions that got a verdict (the attempt budget)
        self._last_verdicts: tuple[Verdict, ...] = ()
        self._last_finished: tuple[Outcome, ...] = ()
        self._pause = threading.Event()
        self._cancel = threading.Event()
        self._cancel_reason: str | None = None
        self._sinks_started = False
        self._recorded = 0  # the last tick every sink recorded
        self._lock = threading.Lock()
        self._prev: SceneGraph | None = None
        n = len(scenario.contract.predicates)
        #: per contract condition: the tick since which it has been TRUE (its witness), or None
        self.witnesses: list[int | None] = [None] * n

    # -- control -----------------------------------------------------------------------------
    @property
    def tick(self) -> int:
        return self.world.tick_index

    def start(self) -> None:
        """Reset the world from the seed and record tick 0."""
        if self.state is not RunState.IDLE:
            raise RuntimeError(f"episode already {self.state.value}")
        self._ending_on_error(lambda: self._begin(self.world.reset(self.seed)))

    def pause(self) -> None:
        self._pause.set()

    def cancel(self, reason: str | None = None) -> None:
        """End the run ``cancelled`` at the next tick boundary; ``reason`` is stored with it."""
        self._cancel_reason = reason
        self._cancel.set()

    def run(self) -> EpisodeResult | None:
        """Tick until finished, paused or cancelled (checked between ticks)."""
        if self.state is RunState.IDLE:
            self.start()
        self._pause.clear()
        if self.state is RunState.FINISHED:
            return self.result
        self.state = RunState.RUNNING
        while self.state is RunState.RUNNING:
            if self._pause.is_set():
                self.state = RunState.PAUSED
                break
            self.step()
        return self.result

    def step(self) -> None:
        """Advance exactly one tick (or finish as cancelled if cancel was asked)."""
        with self._lock:
            if self.state is RunState.IDLE:
                self.start()
            if self.state is RunState.FINISHED:
                return
            if self._cancel.is_set():
                self._finish("cancelled", self._cancel_reason)
                return
            self._ending_on_error(self._one_tick)

    def submit(self, action: Action, source: str = "user") -> ActionEntry:
        """Queue an action from outside the agent (a person at the GUI or CLI)."""
        return self._enqueue(action, source, self.tick)

    # -- the tick ----------------------------------------------------------------------------
    def _track_conditions(self, graph: SceneGraph) -> None:
        for i, p in enumerate(self.scenario.contract.predicates):
            if p.evaluate(graph, self.events) is Truth.T:
                if self.witnesses[i] is None:
                    self.witnesses[i] = graph.tick
            else:
                self.witnesses[i] = None

    def _begin(self, graph: SceneGraph) -> None:
        self._prev = graph
        self._track_conditions(graph)
        entry = TickEntry(0, self.world.state_hash(), {}, {}, graph.to_json())
        self.hashes = [entry.state_hash]
        self._sinks_started = True
        for sink in self.sinks:
            sink.start(self)
        self._emit(entry, [], [], self.snapshot() if self.record else None)
        self.state = RunState.PAUSED

    def _one_tick(self) -> None:
        t = self.tick
        graph = self.world.graph
        changed: list[ActionEntry] = []
        fired: list[AnomalyEntry] = []
        for sched in self.schedule:
            if sched.index in self._fired:
                continue
            due = (
                sched.at_tick == t
                if sched.at_tick is not None
                else (sched.when.evaluate(graph, self.events) is Truth.T)
            )
            if due:
                self._fired.add(sched.index)
                self.world.inject(sched.anomaly)
                fired_entry = AnomalyEntry(
                    len(self.anomaly_log), t, sched.anomaly, dict(sched.trigger)
                )
                self.anomaly_log.append(fired_entry)
                fired.append(fired_entry)
        obs = Observation(
            tick=t,
            graph=self.world.graph,
            busy=self.world.busy,
            queued=len(self._queue),
            verdicts=self._last_verdicts,
            finished=self._last_finished,
            events=tuple(self.events),
        )
        for action in () if self.held else self.agent.decide(obs):
            changed.append(self._enqueue(action, self.agent.source, t))
        verdicts: list[Verdict] = []
        while not self.held and not self.world.busy and self._queue:
            entry_a = self._queue.popleft()
            verdict = self.world.submit(entry_a.action)
            entry_a.verdict = verdict
            self._attempts += 1
            verdicts.append(verdict)
            if entry_a not in changed:
                changed.append(entry_a)
            if verdict.accepted:
                self._consecutive_rejections = 0
                self.events.append(Event.from_verdict(verdict, t))
                self._running = entry_a
                break
            self._consecutive_rejections += 1
        report = self.world.tick()
        finished: list[Outcome] = []
        if report.finished is not None and self._running is not None:
            self._running.outcome = report.finished.result
            self._running.finished_tick = report.tick
            changed.append(self._running)
            finished.append(report.finished)
            self._running = None
        self._last_verdicts = tuple(verdicts)
        self._last_finished = tuple(finished)
        graph_after = self.world.graph
        assert self._prev is not None
        keyframe = self.record and report.tick % self.keyframe_every == 0
        if self.record:
            entry = TickEntry(
                report.tick,
                self.world.state_hash(),
                diff(self._prev, graph_after).to_json(),
                report.controller,
                graph_after.to_json() if keyframe else None,
            )
            self.hashes.append(entry.state_hash)
        else:  # nothing will read a trace: no hash, no diff, no snapshots
            entry = TickEntry(report.tick, "", {}, report.controller)
        self._prev = graph_after
        self._track_conditions(graph_after)
        end = self._status()
        snap = self.record and report.tick % self.snapshot_every == 0
        snapshot = self.snapshot() if snap or keyframe or (end and self.record) else None
        self._emit(entry, changed, fired, snapshot)
        if end:
            self._finish(*end)

    def _status(self) -> tuple[str, str | None] | None:
        """How the run ends after this tick (status, end reason), or None: it goes on."""
        t = self.tick
        if self.end_tick is not None:
            return (self._settled_status(), None) if t >= self.end_tick else None
        idle = not self.world.busy and not self._queue
        if self.agent.done and idle and not self.held:
            stop = getattr(self.agent, "stopped", None)
            if isinstance(stop, AgentStop):
                return stop.status, stop.reason
            return "completed", None
        if self._attempts >= self.budgets.max_attempts:
            return "budget_exhausted", None
        if self._consecutive_rejections >= self.budgets.max_consecutive_rejections:
            return "aborted", None
        if t >= self.budgets.max_ticks:
            return "execution_blocked", None
        return None

    def _settled_status(self) -> str:
        """Status at a forced end (replays end where the original did)."""
        if not self.world.busy and not self._queue:
            return "completed"
        return "execution_blocked"

    def _enqueue(self, action: Action, source: str, tick: int) -> ActionEntry:
        entry = ActionEntry(len(self.actions), tick, source, action)
        self.actions.append(entry)
        self._queue.append(entry)
        return entry

    def _emit(
        self,
        entry: TickEntry,
        actions: Sequence[ActionEntry],
        anomalies: Sequence[AnomalyEntry],
        snapshot: dict[str, Any] | None,
    ) -> None:
        for sink in self.sinks:
            sink.record(self, entry, actions, anomalies, snapshot)
        self._recorded = entry.tick
        if self.on_tick is not None:
            self.on_tick(self, entry)

    def _finish(self, status: str, end_reason: str | None = None) -> None:
        failure = self._end(status, end_reason)
        if failure is not None:
            raise failure

    def _end(self, status: str, end_reason: str | None) -> Exception | None:
        """Set the result and tell every sink. A sink that raises does not stop the others:
        the sinks after it are told the run ``failed`` (storing its end failed); the first such
        error is returned for the caller to raise."""
        self.result = episode_result(self, status, end_reason, ticks=self._recorded)
        self.state = RunState.FINISHED
        first: Exception | None = None
        for sink in self.sinks:
            try:
                sink.finish(self, self.result)
            except Exception as err:
                if first is None:
                    first = err
                    why = f"storing its end failed: {describe(err)}"
                    self.result = episode_result(self, "failed", why, ticks=self._recorded)
        return first

    def _ending_on_error(self, work: Callable[[], None]) -> None:
        """Run ``work``; if it raises before the run has ended, end it first (failed or
        cancelled, with what the sinks recorded so far) and raise the error on."""
        try:
            work()
        except BaseException as err:
            if self.state is not RunState.FINISHED and self._sinks_started:
                status, reason = abnormal_end(err)
                failure = self._end(status, reason)
                if failure is not None:
                    err.add_note(f"and storing the episode's end failed too: {describe(failure)}")
            raise

    # -- snapshot / fork ---------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """World + engine state at the current tick boundary (JSON-able)."""

        def entry_json(e: ActionEntry) -> dict[str, Any]:
            return {
                "idx": e.idx,
                "tick": e.tick,
                "source": e.source,
                "action": e.action.to_json(),
                "verdict": e.verdict.to_json() if e.verdict else None,
                "outcome": e.outcome,
                "finished_tick": e.finished_tick,
            }

        return {
            "tick": self.tick,
            "world": self.world.snapshot(),
            "agent": self.agent.state(),
            "queue": [e.idx for e in self._queue],
            "running": self._running.idx if self._running else None,
            "actions": [entry_json(e) for e in self.actions],
            "anomalies_fired": sorted(self._fired),
            "events": [e.to_json() for e in self.events],
            "consecutive_rejections": self._consecutive_rejections,
            "hashes": list(self.hashes),
            "witnesses": list(self.witnesses),
        }

    def restore(self, snap: dict[str, Any]) -> None:
        """Continue from a snapshot (of this scenario) as if the episode had run to it."""
        self.world.restore(snap["world"])
        self.agent.restore({**snap["agent"], "at_tick": snap["tick"]})
        self.actions = []
        for d in snap["actions"]:
            e = ActionEntry(d["idx"], d["tick"], d["source"], Action.from_json(d["action"]))
            e.verdict = Verdict.from_json(d["verdict"]) if d["verdict"] else None
            e.outcome = d["outcome"]
            e.finished_tick = d["finished_tick"]
            self.actions.append(e)
        self._attempts = sum(1 for e in self.actions if e.verdict is not None)
        self._queue = deque(self.actions[i] for i in snap["queue"])
        self._running = self.actions[snap["running"]] if snap["running"] is not None else None
        self._fired = set(snap["anomalies_fired"])
        self.events = [
            Event(e["verb"], e.get("obj"), e.get("target"), e.get("tick")) for e in snap["events"]
        ]
        self._consecutive_rejections = int(snap["consecutive_rejections"])
        self.hashes = list(snap["hashes"])
        self.witnesses = list(snap["witnesses"])
        self._prev = self.world.graph
        self._recorded = int(snap["tick"])
        self.state = RunState.PAUSED
        self._sinks_started = True
        for sink in self.sinks:
            sink.start(self)
