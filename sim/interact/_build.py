"""Build, run and replay interactive episodes (user + harness + assistant on a world).

An interactive episode is an engine episode whose agent is an :class:`InteractiveAgent`; its
config records everything needed to run it again: persona, participants and their options,
timing, and the event schedule it ran with. Replay feeds the recorded user turns and assistant
replies back and compares every tick's state hash.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from sim.assistants import Timing, TimingConfig
from sim.episode import (
    EpisodeRunner,
    ReplayReport,
    ResolvedArm,
    SqliteSink,
    compare_replay,
    episode_world,
    make_world,
    note_stored,
    open_scenario,
    refuse_perturbed,
    refuse_running,
    run_arm,
)
from sim.interact._participants import Setup, make_assistant, make_user
from sim.interact._replay import ReplayAssistant, ReplayUser
from sim.interact._schedule import Schedule, ScheduleError, load_schedule, parse_schedule
from sim.interact._session import InteractiveAgent
from sim.interact._sink import InteractionSink
from sim.interact._types import SimUser
from sim.scenario import BoundScenario
from sim.users import Persona, parse_persona
from sim.world import World
from storage import EpisodeError, Project

#: the longest measured reply delay, in seconds (spec: 30 ticks of 1.2 s in the kitchen)
CAP_SECONDS = 36.0


def recipe_steps(bound: BoundScenario) -> tuple[str, ...]:
    """The recipe as the assistant may see it: the reference commands, waits in words."""
    out = []
    for step in bound.reference:
        if step.action is not None:
            out.append(step.action.text or step.action.describe())
        else:
            out.append(f"wait until {step.wait_until.describe()}")
    return tuple(out)


def timing_for(
    world_delta: float, mode: Timing = "fixed", *, cadence: int = 2, fixed_delay: int = 2
) -> TimingConfig:
    """The spec's timing on a world whose tick is ``world_delta`` seconds long."""
    cap = math.ceil(round(CAP_SECONDS / world_delta, 6))
    return TimingConfig(
        mode=mode, cadence=cadence, fixed_delay=fixed_delay, cap=cap, tick_s=world_delta
    )


def schedules_dir() -> Path:
    return Path(str(resources.files("resources") / "sim" / "schedules"))


def known_ids(world: World, seed: int) -> set[str]:
    """The objects this scenario's layout actually places (not every object of the scene
    family), so a schedule naming one it lacks is refused before the episode starts."""
    return set(world.reset(seed).nodes)


def default_schedule(bound: BoundScenario, ids: set[str]) -> Schedule:
    """The shipped schedule for the scenario, or none."""
    path = schedules_dir() / f"{bound.name}.json"
    if not path.exists():
        return Schedule(bound.name, 0, (), "<none>")
    return load_schedule(path, bound, ids)


@dataclass
class InteractiveEpisode:
    runner: EpisodeRunner
    agent: InteractiveAgent
    episode_id: str | None
    sink: InteractionSink | None


def build_interactive(
    bound: BoundScenario,
    *,
    mode: str = "symbolic",
    persona: Persona,
    user: str = "rule",
    assistant: str = "oracle",
    user_options: dict[str, Any] | None = None,
    assistant_options: dict[str, Any] | None = None,
    timing: Timing = "fixed",
    schedule: Schedule | dict[str, Any] | None = None,
    seed: int | None = None,
    project: Project | None = None,
    defer: bool = False,
    record: bool = True,
    project_root: Path | None = None,
    batch: int = 25,
    parent_id: str | None = None,
    fork_tick: int | None = None,
    wrap_user: Callable[[SimUser], SimUser] | None = None,
    arm: str | ResolvedArm | None = None,
    profiles: Mapping[str, Mapping[str, Any]] | None = None,
) -> InteractiveEpisode:
    """A ready-to-run interactive episode (nothing is written before it starts).

    ``batch``: ticks kept in memory between writes (a live view wants them sooner);
    ``parent_id``/``fork_tick`` link a fork to the episode it re-ran to that tick;
    ``wrap_user`` wraps the user (a seat a person can take); ``arm`` (physics): a shipped arm
    or a profile of ``project`` (None: the scenario's, else the default), recorded with its
    digest. A symbolic world has no arm, so none is resolved or recorded.

    ``defer`` records in memory, with or without ``project``: ``sink.deferred()`` is then the
    finished episode as data, for a job run where the project is not (its arm resolved and
    its participants' model ``profiles`` given by the caller, so nothing reads the project).
    """
    the_arm = None
    if mode == "physics":
        the_arm = arm if isinstance(arm, ResolvedArm) else run_arm(arm, bound, project)
    world = make_world(bound, mode, arm=the_arm)
    seed = bound.scenario.seed if seed is None else seed
    ids = known_ids(world, seed)
    if schedule is None:
        sched = default_schedule(bound, ids)
    elif isinstance(schedule, Schedule):
        sched = schedule
    else:
        sched = parse_schedule(schedule, bound, ids, source="<recorded schedule>")
    tcfg = timing_for(world.delta, timing)
    root = project.root if project is not None else project_root
    sent = dict(profiles or {})
    u_setup = Setup(bound, persona, seed, dict(user_options or {}), root, sent)
    a_setup = Setup(bound, persona, seed, dict(assistant_options or {}), root, sent)
    the_user = make_user(user, u_setup)
    if wrap_user is not None:
        the_user = wrap_user(the_user)
    agent = InteractiveAgent(
        instruction=bound.scenario.instruction,
        steps=recipe_steps(bound),
        persona=persona,
        user=the_user,
        assistant=make_assistant(assistant, a_setup),
        schedule=sched,
        timing=tcfg,
    )
    sinks: list[Any] = []
    isink: InteractionSink | None = None
    if project is not None or defer:
        config = {
            "interactive": True,
            "persona": persona.model_dump(mode="json"),
            "user": user,
            "assistant": assistant,
            "user_options": dict(user_options or {}),
            "assistant_options": dict(assistant_options or {}),
            "timing": {"mode": tcfg.mode, "cadence": tcfg.cadence,
                       "fixed_delay": tcfg.fixed_delay, "cap": tcfg.cap, "tick_s": tcfg.tick_s},
            "schedule": sched.to_json(),
            "alpha": sched.alpha,
            "anomalies": True,
        }  # fmt: skip
        if the_arm is not None:
            config |= {"arm": the_arm.label, "arm_digest": the_arm.digest}
        db = SqliteSink(project, agent=f"{user}+{assistant}", mode=mode, config=config,
                        defer=defer, batch=batch, parent_id=parent_id,
                        fork_tick=fork_tick)  # fmt: skip
        isink = InteractionSink(db, agent)
        sinks = [isink, db]
    runner = EpisodeRunner(
        world, bound, agent, seed=seed, sinks=sinks, record=record or bool(sinks)
    )
    return InteractiveEpisode(runner, agent, None, isink)


def run_interactive(**kwargs: Any) -> InteractiveEpisode:
    """Build and run one interactive episode to its end (see :func:`build_interactive`)."""
    ep = build_interactive(**kwargs)
    try:
        ep.runner.run()
    except BaseException as err:  # the runner stored how it ended: say where
        db = ep.sink.db if ep.sink is not None else None
        note_stored(err, db.episode_id if db else None, ep.runner.result)
        raise
    finally:
        ep.runner.world.close()
    if ep.sink is not None and not ep.sink.db.defer:
        ep.episode_id = ep.sink.db.episode_id
    if ep.sink is None:
        ep.agent.finish(ep.runner.tick)
    return ep


def replay_interactive(project: Project, episode_id: str) -> ReplayReport:
    """Re-run a stored interactive episode from its recorded turns and replies."""
    ep = project.episodes.get(episode_id)
    cfg = ep.config
    if not cfg.get("interactive"):
        raise EpisodeError(f"episode {ep.id[:8]} is not an interactive episode")
    refuse_running(ep, "replay it")
    refuse_perturbed(ep, "replay it")
    bound = open_scenario(str(cfg.get("source", ep.scenario)))
    if bound.scenario.digest != ep.scenario_sha:
        raise EpisodeError(f"the scenario changed since episode {ep.id[:8]} was recorded")
    replies, turns, asked = [], [], []
    for x in project.episodes.exchanges(ep.id):
        received = json.loads(x.received_json or "{}")
        if x.party == "assistant":
            replies.append((x.tick, received, float(x.latency_s or 0.0)))
        elif x.party == "user":
            turns.append((x.tick, received))
            if "input" in str(json.loads(x.sent_json).get("reason", "")).split(","):
                asked.append(x.tick)
    world = episode_world(project, ep, bound)  # its arm, checked unchanged
    ids = known_ids(world, ep.seed)
    try:
        sched = parse_schedule(cfg["schedule"], bound, ids, source="<recorded schedule>")
    except ScheduleError as err:
        raise EpisodeError(f"episode {ep.id[:8]}: its recorded schedule: {err}") from None
    t = cfg["timing"]
    persona = parse_persona(cfg["persona"])
    agent = InteractiveAgent(
        instruction=bound.scenario.instruction,
        steps=recipe_steps(bound),
        persona=persona,
        user=ReplayUser(turns, asked),
        assistant=ReplayAssistant(replies),
        schedule=sched,
        timing=TimingConfig(t["mode"], t["cadence"], t["fixed_delay"], t["cap"], t["tick_s"]),
    )
    runner = EpisodeRunner(world, bound, agent, seed=ep.seed, end_tick=ep.ticks)
    return compare_replay(runner, ep.id, project.episodes.hashes(ep.id))
