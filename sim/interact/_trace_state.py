"""What a stored episode's trace says about its end: the final scene graph, the accepted
actions, and the length of the error-free reference rollout (T_ref).

Only the stored rows are read (``project.episodes``), never a world, so metrics computed from
them are reproducible offline.
"""

from __future__ import annotations

import json

from sim.episode import apply_diff
from sim.world import SceneGraph
from storage import ActionRecord, EpisodeRecord, EpisodeStatus, Project


def attempted(a: ActionRecord) -> bool:
    """Whether the world gave the action a verdict: accepted, or refused with reasons (an action
    still queued when the episode ended has neither)."""
    return a.accepted or bool(json.loads(a.failed_json))


def final_graph(project: Project, ep: EpisodeRecord) -> SceneGraph | None:
    """The scene graph at the episode's last tick.

    The engine stores a snapshot at the finishing tick; a symbolic world's snapshot holds its
    graph, exactly. A physics snapshot holds raw state instead, so its graph is rebuilt from the
    last keyframe and the diffs after it: relations, attributes and visibility are exact, while
    positions stay those of the keyframe (the diffs record how far things moved, not where to).
    """
    snap = project.episodes.snapshot_at_or_before(ep.id, ep.ticks)
    if snap is not None and snap[0] == ep.ticks:
        world = json.loads(snap[1]).get("world") or {}
        if isinstance(world.get("graph"), dict):
            return SceneGraph.from_json(world["graph"])
    graph: SceneGraph | None = None
    for t in project.episodes.ticks(ep.id):
        if t.graph_json is not None:
            graph = SceneGraph.from_json(json.loads(t.graph_json))
        elif graph is not None:
            graph = apply_diff(graph, t.tick, json.loads(t.diff_json))
    return graph


def reference_ticks(project: Project, ep: EpisodeRecord) -> int | None:
    """T_ref: the length of a stored, completed reference rollout of the same scenario text and
    world mode (the same seed preferred, else the newest); None when the project has none."""
    if ep.reference and ep.t_ref is not None:
        return ep.t_ref
    found = [
        r
        for r in project.episodes.list(scenario=ep.scenario, reference=True)
        if r.scenario_sha == ep.scenario_sha
        and r.mode == ep.mode
        and r.status is EpisodeStatus.COMPLETED
        and r.t_ref is not None
    ]
    same_seed = [r for r in found if r.seed == ep.seed]
    pick = same_seed or found
    return pick[0].t_ref if pick else None
