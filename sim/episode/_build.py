"""Put an episode together: scenario → world (physics or symbolic) → runner → sinks.

The CLI, workers, tests and (later) the GUI all build episodes here, so a run started anywhere
is the same run. Replays and forks rebuild the scenario from the episode's stored source and
refuse if the file changed since (its digest is stored with the episode).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from sim.episode._agents import Agent, ReplayAgent, ScriptedAgent
from sim.episode._arms import ARMS, DEFAULT_ARM, ResolvedArm, episode_arm, run_arm, shipped_spec
from sim.episode._ending import note_stored
from sim.episode._exchange_log import ExchangeLog
from sim.episode._runner import EpisodeRunner, Sink
from sim.episode._sinks import DeferredEpisode, SqliteSink, VideoSink, motion_version
from sim.gl import require_rendering
from sim.scenario import (
    BoundScenario,
    ScenarioError,
    bind,
    parse_scenario,
    resolve,
    schedule_from_json,
)
from sim.world import Action, SceneInfo, World
from storage import EpisodeError, EpisodeRecord, EpisodeStatus, Project

if TYPE_CHECKING:
    from sim.mujoco import ArmSpec

MODES = ("physics", "symbolic")
AGENTS = ("scripted",)

#: an agent built once the world exists (a model-backed or external agent needs it):
#: ``(bound, world, log) -> (agent, its own sinks)``; ``log`` stores what it sent and received.
#: An agent with a ``close()`` is closed when the episode ends, however it ends.
AgentFactory = Callable[[BoundScenario, World, ExchangeLog], tuple[Agent, Sequence[Sink]]]


@cache
def scene_info(family: str) -> SceneInfo:
    from sim.mujoco import load_scene_info

    return load_scene_info(family)


def open_scenario(ref: str, *, text: str | None = None) -> BoundScenario:
    """Load, validate and bind a shipped scenario name or a scenario file. ``text``: the
    file's contents read elsewhere (a job on a cluster node gets the file by its hash), bound
    with ``ref`` as its source, so the episode records the file it names."""
    if text is not None:
        scenario, source = parse_scenario(text, source=ref), ref
    else:
        scenario, source = resolve(ref)
    return bind(scenario, scene_info(scenario.family), source=source)


def make_world(
    bound: BoundScenario, mode: str, *, arm: str | ArmSpec | ResolvedArm | None = None,
    delta: float | None = None,
) -> World:  # fmt: skip
    """The scenario's world. ``arm`` (physics only): a shipped arm's name, a spec (a resolved
    profile's, see :func:`resolve_arm`), or None for the scenario's own ``arm`` if it names a
    shipped arm, else the default. A profile needs the project: resolve it first. ``delta``
    (physics only): seconds per tick instead of the scenario's (teleoperation steps faster)."""
    if mode == "physics":
        from sim.mujoco import PhysicsWorld

        if arm is None:
            arm = bound.scenario.arm or DEFAULT_ARM
            if arm not in ARMS:
                raise ScenarioError(
                    f"{bound.source}: arm: {arm!r} is an arm profile, which only a project "
                    "has; run it in a project (--project) or with --arm"
                )
        if isinstance(arm, ResolvedArm):
            spec = arm.spec
        elif isinstance(arm, str):
            if arm not in ARMS:
                raise ValueError(f"arm must be one of {', '.join(ARMS)}, not {arm!r}")
            spec = shipped_spec(arm)
        else:
            spec = arm
        return PhysicsWorld(
            bound.scenario.family, bound.layout, arm=spec,
            delta=bound.scenario.delta if delta is None else delta,
        )  # fmt: skip
    if mode == "symbolic":
        from sim.symbolic import SymbolicWorld

        return SymbolicWorld(
            scene_info(bound.scenario.family), bound.layout, delta=bound.scenario.delta
        )
    raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")


def make_agent(name: str, bound: BoundScenario) -> Agent:
    if name == "scripted":
        return ScriptedAgent(bound.reference)
    raise ValueError(f"agent must be one of {', '.join(AGENTS)}, not {name!r}")


@dataclass
class Episode:
    runner: EpisodeRunner
    episode_id: str | None
    video_shas: dict[str, str]
    db: SqliteSink | None = None
    log: ExchangeLog | None = None

    def commit(self, project: Project) -> str:
        """Write a deferred episode whole, with its agent's exchanges (joins the caller's
        transaction); returns its id."""
        if self.db is None:
            raise RuntimeError("commit() is for an episode run with a project and defer=True")
        log = self.log
        self.episode_id = self.db.commit(
            project, also=None if log is None else lambda eid: log.write(project, eid)
        )
        return self.episode_id

    def deferred(self) -> DeferredEpisode:
        """The finished deferred episode, with its agent's exchanges, as data (no project
        needed): what a job run away from the project sends back to be committed."""
        if self.db is None:
            raise RuntimeError("deferred() is for an episode run with defer=True")
        return self.db.deferred(exchanges=list(self.log.exchanges) if self.log else [])


def run_episode(
    bound: BoundScenario,
    *,
    mode: str = "physics",
    agent: str = "scripted",
    agent_factory: AgentFactory | None = None,
    seed: int | None = None,
    project: Project | None = None,
    videos: Sequence[str] = (),
    video_size: tuple[int, int] = (640, 480),
    anomalies: bool = True,
    reference: bool = False,
    arm: str | ResolvedArm | None = None,
    defer: bool = False,
    extra_sinks: Sequence[Sink] = (),
) -> Episode:
    """Run one episode to the end, recording into ``project`` when given.

    ``defer`` keeps the recording in memory until :meth:`Episode.commit` (a batch job stores
    its episode in the transaction that marks the job done), with or without ``project``
    (:meth:`Episode.deferred`: a job run where the project is not); ``extra_sinks`` run first
    (a job's progress and cancellation).

    ``agent`` names the agent (stored with the episode); ``agent_factory`` builds it when it is
    not one the engine knows (``llm``, ``external``), and its exchanges are stored too.

    ``arm``: a shipped arm or a profile of ``project`` (``NAME``, ``NAME@VERSION``), or one
    resolved already; None runs the scenario's ``arm``, else the default. The episode records
    the arm's label and digest, so a replay on changed arm files is refused.
    """
    if videos:
        require_rendering()  # a check: open_scenario has loaded MuJoCo already
    the_arm = arm if isinstance(arm, ResolvedArm) else run_arm(arm, bound, project)
    world = make_world(bound, mode, arm=the_arm)
    sinks: list[Sink] = []
    db: SqliteSink | None = None
    if project is not None or defer:
        config: dict[str, Any] = {
            "anomalies": anomalies, "videos": list(videos), "arm": the_arm.label,
            "arm_digest": the_arm.digest,
        }  # fmt: skip
        db = SqliteSink(project, agent=agent, mode=mode, reference=reference, config=config,
                        defer=defer)  # fmt: skip
        sinks.append(db)
    video_sinks = [VideoSink(cam, size=video_size, db=db) for cam in videos]
    sinks.extend(video_sinks)
    log = ExchangeLog(db)
    the_agent: Agent | None = None
    runner: EpisodeRunner | None = None
    try:
        if agent_factory is None:
            the_agent = make_agent(agent, bound)
        else:
            the_agent, own = agent_factory(bound, world, log)
            sinks[:0] = [*own, log]  # the log after the agent's own (`end`), before the SQLite sink
        sinks[:0] = list(extra_sinks)
        runner = EpisodeRunner(world, bound, the_agent, seed=seed, sinks=sinks, anomalies=anomalies)
        runner.run()
    except BaseException as err:  # the runner stored how it ended: say where
        note_stored(err, db.episode_id if db else None, runner.result if runner else None)
        raise
    finally:
        world.close()
        close = getattr(the_agent, "close", None)
        if callable(close):
            close()
    shas = {v.camera: v.media_sha for v in video_sinks if v.media_sha}
    return Episode(runner, db.episode_id if db else None, shas, db, log)


@dataclass(frozen=True)
class ReplayReport:
    episode_id: str
    ticks: int
    compared: int
    first_divergent: int | None
    expected: str | None = None
    got: str | None = None

    @property
    def identical(self) -> bool:
        return self.first_divergent is None


def episode_world(project: Project, ep: EpisodeRecord, bound: BoundScenario) -> World:
    """The world a stored episode ran in, to replay it: its mode and, in physics, the arm it
    recorded, resolved in ``project`` and refused if its files changed (:func:`episode_arm`)."""
    if ep.mode.value != "physics":
        return make_world(bound, ep.mode.value)
    return make_world(bound, "physics", arm=episode_arm(ep, project))


def person_acts(ep: EpisodeRecord) -> list[tuple[int, str]]:
    """Where a person acted on a live run's world, as (tick, what happened): pushes by hand
    (``config.perturbed``) and takeovers of the arm (``config.takeovers``), by tick. From the
    first one on, the trace no longer follows from its recorded decisions (a takeover's teleop
    commands are not replayed: they would need their own decider and the hand-over moments)."""
    acts = [(int(s[0]), "a body was pushed by hand") for s in ep.config.get("perturbed") or []]
    acts += [(int(s["start"]), f"{s.get('who') or 'a person'} took the arm over")
             for s in ep.config.get("takeovers") or [] if isinstance(s, dict)]  # fmt: skip
    return sorted(acts)


def perturbed_at(ep: EpisodeRecord) -> int | None:
    """The first tick at which a person acted on the world in a live run (see
    :func:`person_acts`), or None."""
    acts = person_acts(ep)
    return acts[0][0] if acts else None


def refuse_running(ep: EpisodeRecord, doing: str) -> None:
    """Refuse ``doing`` on an episode still marked running: it is being recorded now, or the run
    that recorded it died before runs said how they end (its trace may be partial or empty)."""
    if ep.status is EpisodeStatus.RUNNING:
        raise EpisodeError(
            f"episode {ep.id[:8]} is still marked running: it is being recorded, or the process "
            f"that recorded it died without saying how it ended; cannot {doing}"
        )


def refuse_perturbed(ep: EpisodeRecord, doing: str, before: int | None = None) -> None:
    """Refuse ``doing`` on an episode a person acted on in a live run (at or ``before`` a
    tick, if given): from there its ticks are not its decisions' own."""
    acts = person_acts(ep)
    if acts and (before is None or acts[0][0] < before):
        tick, what = acts[0]
        raise EpisodeError(
            f"episode {ep.id[:8]}: {what} at tick {tick} in the live run, so its ticks after "
            f"that do not follow from its decisions; cannot {doing}"
            + ("" if before is None else f" past tick {tick}")
        )


def replay_runner(
    world: World, bound: BoundScenario, ep: EpisodeRecord, decisions: list[tuple[int, Action]]
) -> EpisodeRunner:
    """A runner that re-makes a stored episode's decisions, as it ran them (its seed, its
    anomaly setting, its length): what replay, fork and the review's world cursor step."""
    return EpisodeRunner(
        world, bound, ReplayAgent(decisions, until=ep.ticks), seed=ep.seed,
        anomalies=bool(ep.config.get("anomalies", True)), end_tick=ep.ticks,
    )  # fmt: skip


def recorded(
    project: Project, episode_id: str
) -> tuple[EpisodeRecord, BoundScenario, list[tuple[int, Action]]]:
    """The stored episode, its scenario (checked unchanged) and its recorded decisions."""
    ep = project.episodes.get(episode_id)
    if ep.mode.value == "physics":
        recorded_motion = int(ep.config.get("motion", 1))  # episodes before v2 did not say
        current = motion_version()
        if recorded_motion != current:
            raise EpisodeError(
                f"episode {ep.id[:8]} was recorded with arm motion v{recorded_motion}; this "
                f"workbench moves the arm differently (v{current}), so its ticks "
                "cannot be reproduced: run its scenario again to get a replayable episode"
            )
    source = str(ep.config.get("source", ep.scenario))
    bound = open_scenario(source)
    if bound.scenario.digest != ep.scenario_sha:
        raise ScenarioError(
            f"{source}: the scenario changed since episode {ep.id[:8]} was recorded "
            "(its digest differs); replay needs the file it ran with"
        )
    if "anomaly_schedule" in ep.config:  # the schedule the episode actually ran with
        ids = set(scene_info(bound.scenario.family).objects)
        bound = replace(bound, anomalies=schedule_from_json(ep.config["anomaly_schedule"], ids))
    decisions = [
        (a.tick, Action.from_json(json.loads(a.action_json)))
        for a in project.episodes.actions(ep.id)
    ]
    return ep, bound, decisions


def replay_episode(project: Project, episode_id: str) -> ReplayReport:
    """Re-run a stored episode from its seed and recorded decisions; compare every hash."""
    ep, bound, decisions = recorded(project, episode_id)
    refuse_running(ep, "replay it")
    refuse_perturbed(ep, "replay it")
    if ep.parent_id is not None:
        raise EpisodeError(
            f"episode {ep.id[:8]} is a fork of {ep.parent_id[:8]} at tick {ep.fork_tick}; "
            "its trace starts there, so replay the parent episode"
        )
    expected = project.episodes.hashes(ep.id)
    world = episode_world(project, ep, bound)
    runner = replay_runner(world, bound, ep, decisions)
    return compare_replay(runner, ep.id, expected)


def compare_replay(runner: EpisodeRunner, episode_id: str, expected: list[str]) -> ReplayReport:
    """Run a replaying runner, comparing each state hash with the recorded one as it is made,
    and stop at the first difference (the world is closed at the end)."""
    try:
        runner.start()
        while (
            runner.hashes == expected[: len(runner.hashes)]
            and runner.result is None
            and len(runner.hashes) < len(expected)  # a run that ended early: as far as it got
        ):
            runner.step()
    finally:
        runner.world.close()
    got = runner.hashes
    ticks = len(expected) - 1
    first = next(
        (i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
        None if len(got) == len(expected) else min(len(got), len(expected)),
    )
    if first is None:
        return ReplayReport(episode_id, ticks, len(got), None)
    return ReplayReport(
        episode_id, ticks, first, first,
        expected[first] if first < len(expected) else None,
        got[first] if first < len(got) else None,
    )  # fmt: skip


def fork_episode(
    project: Project, episode_id: str, tick: int, *, videos: Sequence[str] = ()
) -> Episode:
    """Continue a stored episode from ``tick`` as a new episode (parent link kept).

    The fork restores the nearest stored snapshot at or before ``tick``, re-runs the recorded
    decisions up to ``tick`` and records from there, still with the recorded decisions (so it
    reproduces the original's hashes; other deciders arrive with issues 6–8).
    """
    if videos:
        require_rendering()  # a check: open_scenario has loaded MuJoCo already
    ep, bound, decisions = recorded(project, episode_id)
    refuse_running(ep, "fork it")
    if not 0 <= tick <= ep.ticks:
        raise EpisodeError(f"tick {tick} is outside episode {ep.id[:8]} (0–{ep.ticks})")
    refuse_perturbed(ep, "fork it", before=tick)
    world = episode_world(project, ep, bound)
    arm: dict[str, Any] = {k: ep.config[k] for k in ("arm", "arm_digest") if k in ep.config}
    snap = project.episodes.snapshot_at_or_before(ep.id, tick)
    runner = replay_runner(world, bound, ep, decisions)
    if snap is None:
        runner.start()
    else:
        runner.restore(json.loads(snap[1]))
    while runner.tick < tick and runner.result is None:
        runner.step()
    db = SqliteSink(
        project,
        agent="replay",
        mode=ep.mode.value,
        config={"anomalies": ep.config.get("anomalies", True), "forked_from": ep.id, **arm},
        parent_id=ep.id,
        fork_tick=tick,
    )
    video_sinks = [VideoSink(cam, db=db) for cam in videos]
    runner.sinks = [db, *video_sinks]
    for sink in runner.sinks:
        sink.start(runner)
    try:
        runner.run()
    finally:
        world.close()
    shas = {v.camera: v.media_sha for v in video_sinks if v.media_sha}
    return Episode(runner, db.episode_id, shas)
