"""Fork a recorded interactive episode at a tick into a live one, and compare two branches.

A fork re-runs the episode from tick 0 with its own participants (they are deterministic: the
prefix is the recorded one, tick for tick, which :func:`first_divergence` confirms) and records
it whole as a new episode linked to its parent; at the fork tick the live session pauses, and a
person may take the user's seat (:class:`sim.interact.SeatUser`) or let it run on. Recording the
whole prefix, not just what follows, keeps every fork an ordinary episode: it opens, replays and
exports like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sim.assistants import Timing
from sim.episode import (
    EpisodeRunner,
    episode_arm,
    episode_world,
    open_scenario,
    refuse_perturbed,
)
from sim.interact import SeatUser, build_interactive
from sim.review._live import Build
from sim.users import parse_persona
from storage import EpisodeError, Project

LIVE_BATCH = 2


def fork_build(project: Project, episode_id: str, tick: int) -> Build:
    """How to build the fork of a stored interactive episode at ``tick`` (see the module doc)."""
    ep = project.episodes.get(episode_id)
    cfg = ep.config
    if not cfg.get("interactive"):
        raise EpisodeError(
            f"episode {ep.id[:8]} has no simulated user to hand over; fork it with "
            "`workbench sim fork` instead"
        )
    if not 0 <= tick <= ep.ticks:
        raise EpisodeError(f"tick {tick} is outside episode {ep.id[:8]} (0–{ep.ticks})")
    refuse_perturbed(ep, "fork it", before=tick)
    bound = open_scenario(str(cfg.get("source", ep.scenario)))
    if bound.scenario.digest != ep.scenario_sha:
        raise EpisodeError(f"the scenario changed since episode {ep.id[:8]} was recorded")
    persona = parse_persona(cfg["persona"])
    timing: Timing = "measured" if cfg["timing"]["mode"] == "measured" else "fixed"
    parent = ep.id
    # the parent's own arm, refused here (before anything runs) if its files changed
    arm = episode_arm(ep, project) if ep.mode.value == "physics" else None

    def build(p: Project) -> tuple[EpisodeRunner, Any]:
        ie = build_interactive(
            bound, mode=ep.mode.value, persona=persona, user=str(cfg["user"]),
            assistant=str(cfg["assistant"]), user_options=dict(cfg.get("user_options") or {}),
            assistant_options=dict(cfg.get("assistant_options") or {}), timing=timing,
            schedule=cfg["schedule"], seed=ep.seed, project=p, batch=LIVE_BATCH,
            parent_id=parent, fork_tick=tick, wrap_user=SeatUser, arm=arm,
        )  # fmt: skip
        return ie.runner, ie

    return build


def fork_world(project: Project, episode_id: str) -> Callable[[], Any] | None:
    """What makes a world for a fork's MuJoCo view (its parent's scene and arm), called on the
    frame thread; None for a symbolic episode, which has nothing to render."""
    ep = project.episodes.get(episode_id)
    if ep.mode.value != "physics":
        return None
    bound = open_scenario(str(ep.config.get("source", ep.scenario)))
    root = Path(project.root)

    def make() -> Any:
        with Project.open(root) as p:  # this thread's own connection
            return episode_world(p, ep, bound)

    return make


def first_divergence(a: Sequence[str], b: Sequence[str]) -> int | None:
    """The first tick at which two branches' state hashes differ (or one ends); None if never."""
    for t, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return t
    return None if len(a) == len(b) else min(len(a), len(b))
