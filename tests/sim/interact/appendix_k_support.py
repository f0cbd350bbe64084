"""Shared pieces of the Appendix K re-enactments: stored episodes with scripted replies."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sim.assistants import AssistantClock
from sim.episode import open_scenario
from sim.interact import InteractiveEpisode, build_interactive
from sim.users import PROFILES, Persona
from storage import Project, TurnRecord


def schedule(scenario: str, *events: dict[str, Any], alpha: int = 0) -> dict[str, Any]:
    return {"format": "workbench-events/1", "scenario": scenario, "alpha": alpha,
            "events": list(events)}  # fmt: skip


def run(
    project: Project,
    scenario: str,
    persona: str | Persona,
    *,
    events: dict[str, Any] | None = None,
    cues: list[dict[str, Any]] | None = None,
    timing: str = "fixed",
    fixed_delay: int | None = None,
    seed: int | None = None,
) -> InteractiveEpisode:
    """One stored episode: the rule-based user, the scripted assistant saying ``cues``.

    ``fixed_delay`` replaces the kitchen's 2-tick fixed delay (K.1's 12-tick reply); the
    stored config says so too, so the episode replays as it ran.
    """
    who = PROFILES[persona] if isinstance(persona, str) else persona
    ep = build_interactive(
        open_scenario(scenario), persona=who, assistant="scripted",
        assistant_options={"cues": cues or []}, timing=timing,  # type: ignore[arg-type]
        schedule=events, seed=seed, project=project,
    )  # fmt: skip
    if fixed_delay is not None:
        assert ep.sink is not None
        ep.agent.timing = replace(ep.agent.timing, fixed_delay=fixed_delay)
        ep.agent.clock = AssistantClock(ep.agent.timing)
        ep.sink.db.config["timing"]["fixed_delay"] = fixed_delay
    try:
        ep.runner.run()
    finally:
        ep.runner.world.close()
    assert ep.sink is not None
    ep.episode_id = ep.sink.db.episode_id
    return ep


def said(project: Project, eid: str, speaker: str, pattern: str = "") -> list[TurnRecord]:
    """Stored turns of one speaker whose text contains ``pattern`` (case-insensitive)."""
    return [
        t
        for t in project.episodes.turns(eid)
        if t.speaker == speaker and pattern.lower() in t.text.lower()
    ]
