"""The rounds of a stored interactive episode, as the interaction-quality judge sees them.

A round (IVG spec §4.3) is one **spoken** assistant response plus the user's utterances and
actions up to the next spoken response; silence is no round, and neither is a flag said with no
words. Round ``i`` of an episode is its ``i``-th spoken assistant turn, counted from 0, so the
numbering is fixed once the episode is stored (it is part of the verdicts' cache key).

The judge gets, per round, everything §4.3 lists and nothing the spec keeps from it:

- the task and the public task rules (the recipe) and the user's *announced* preferences, as
  the assistant was given them (the first assistant exchange), never the hidden persona axes;
- the public conversation before the response, the response with the tick it was generated
  from and the tick the user heard it (a stale reply is judged against the world it reached);
- the world at that tick, for the factual-grounding gate: every visible object's state
  (:func:`sim.interact.describe_scene` of the graph rebuilt from the trace), the actions the
  user had completed and the one in progress;
- what followed until the next response: the user's utterances, the actions submitted with
  how they ended, and the world at the end of the round.

Not given: the assistant's structured output besides its words (progress record, notes, error
flag: hidden notes and evaluation data), the user's private plan, moves and error calls, and the
event schedule; an action the harness made the user take is just an action the user took.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from annotation import UserError
from sim.interact import describe_scene
from sim.world import SceneGraph
from storage import ActionRecord, EpisodeStatus, Project, TurnRecord

#: the conversation before a response is cut to its most recent lines (cost grows per round)
HISTORY_LINES = 40


class QualityRoundsError(UserError, ValueError):
    """An episode whose rounds cannot be judged (not interactive, still running, …)."""


@dataclass(frozen=True)
class QualityRound:
    """One gradable round: its number, the graded turn, its tick span and the judge input.

    ``tick`` is when the user heard the response; the round lasts until ``end_tick`` (the next
    spoken response, or the end of the episode), exclusive. ``data`` is JSON-ready.
    """

    index: int
    turn_idx: int
    tick: int
    end_tick: int
    data: Mapping[str, Any]


def apply_diff(graph: SceneGraph, diff: Mapping[str, Any], tick: int) -> SceneGraph:
    """``graph`` moved on by one stored tick diff (:meth:`sim.world.GraphDiff.to_json`).

    Relations, attributes and visibility are restored exactly (attribute values as the diff
    rounded them); positions are not in a diff and stay those of the last keyframe, which only
    :meth:`SceneGraph.support` reads, to break a tie between two supports. An object that
    appears between keyframes has no description in the diff and waits for the next keyframe.
    """
    if not diff:
        return graph.replace(tick=tick)
    nodes = dict(graph.nodes)
    for key, changes in dict(diff.get("attrs", {})).items():
        node = nodes.get(key)
        if node is None:
            continue
        attrs, visible = dict(node.attrs), node.visible
        for attr, (_old, new) in dict(changes).items():
            if attr == "visible":
                visible = bool(new)
            elif new is None:
                attrs.pop(attr, None)
            else:
                attrs[attr] = new
        nodes[key] = dataclasses.replace(node, attrs=attrs, visible=visible)
    for key in diff.get("vanished", ()):
        nodes.pop(key, None)
    relations = set(graph.relations)
    relations -= {(str(a), str(b), str(c)) for a, b, c in diff.get("removed", ())}
    relations |= {(str(a), str(b), str(c)) for a, b, c in diff.get("added", ())}
    return graph.replace(tick=tick, nodes=nodes, relations=relations)


def scenes_at(project: Project, episode_id: str, ticks: Iterable[int]) -> dict[int, dict[str, str]]:
    """What a camera would show at each of ``ticks``, rebuilt from the stored trace.

    One pass over the episode's ticks: each keyframe graph replaces the state, each diff moves
    it on. A tick past the end of the trace gets the last state.
    """
    wanted = sorted(set(ticks))
    out: dict[int, dict[str, str]] = {}
    graph: SceneGraph | None = None
    pending = iter(wanted)
    nxt = next(pending, None)
    for row in project.episodes.ticks(episode_id):
        if nxt is None:
            break
        if row.graph_json is not None:
            graph = SceneGraph.from_json(json.loads(row.graph_json))
        elif graph is not None:
            graph = apply_diff(graph, json.loads(row.diff_json), row.tick)
        while nxt is not None and graph is not None and nxt <= row.tick:
            out[nxt] = describe_scene(graph)
            nxt = next(pending, None)
    while nxt is not None:
        out[nxt] = describe_scene(graph) if graph is not None else {}
        nxt = next(pending, None)
    return out


def _public_task(project: Project, episode_id: str) -> dict[str, Any]:
    """Task, recipe and announced preferences exactly as the assistant was first given them."""
    for x in project.episodes.exchanges(episode_id, "assistant"):
        sent = json.loads(x.sent_json)
        return {
            "instruction": str(sent.get("instruction", "")),
            "steps": [str(s) for s in sent.get("steps", ())],
            "preferences": dict(sent.get("preferences", {})),
        }
    return {"instruction": "", "steps": [], "preferences": {}}


def _spoken(turns: Sequence[TurnRecord]) -> list[TurnRecord]:
    return [t for t in turns if t.speaker == "assistant" and t.text.strip()]


def _asked(turn: TurnRecord) -> int | None:
    asked = json.loads(turn.meta_json or "{}").get("asked")
    return int(asked) if isinstance(asked, int) else None


def _result(a: ActionRecord, end_tick: int) -> str:
    if not a.accepted:
        reasons = [str(c.get("message") or c.get("name")) for c in json.loads(a.failed_json)]
        return "rejected" + (f": {'; '.join(reasons)}" if reasons else "")
    if a.finished_tick is None or a.finished_tick >= end_tick:
        return "still in progress at the end of the round"
    return f"finished at tick {a.finished_tick}" + ("" if a.outcome == "ok" else f" ({a.outcome})")


def _world(tick: int, scene: Mapping[str, str], actions: Sequence[ActionRecord]) -> dict[str, Any]:
    done = [
        {"tick": a.finished_tick, "action": a.text}
        for a in actions
        if a.accepted and a.finished_tick is not None and a.finished_tick <= tick
        and a.outcome == "ok"
    ]  # fmt: skip
    running = [
        a.text
        for a in actions
        # an action submitted at ``tick`` itself came after the response (the engine takes
        # the user's action after delivering replies), so it belongs to the round, not here
        if a.accepted and a.tick < tick and (a.finished_tick is None or a.finished_tick > tick)
    ]
    return {
        "tick": tick,
        "objects": dict(scene),
        "completed_actions": done,
        "action_in_progress": running[0] if running else None,
    }


def episode_rounds(project: Project, episode_id: str) -> tuple[QualityRound, ...]:
    """Every round of a finished interactive episode with its judge input (no model call).

    Raises:
        EpisodeNotFoundError: no such episode (or an ambiguous id prefix).
        QualityRoundsError: the episode is not interactive, or still running.
    """
    ep = project.episodes.get(episode_id)
    if not ep.config.get("interactive"):
        raise QualityRoundsError(
            f"episode {ep.id[:8]} is not an interactive episode: it has no conversation to judge"
        )
    if ep.status is EpisodeStatus.RUNNING:
        raise QualityRoundsError(f"episode {ep.id[:8]} is still running; judge it once it ends")
    turns = project.episodes.turns(ep.id)
    spoken = _spoken(turns)
    if not spoken:
        return ()
    actions = project.episodes.actions(ep.id)
    ends = [t.tick for t in spoken[1:]] + [max(ep.ticks, spoken[-1].tick)]
    scenes = scenes_at(project, ep.id, [*(t.tick for t in spoken), *ends])
    task = _public_task(project, ep.id)
    rounds = []
    for i, (turn, end) in enumerate(zip(spoken, ends, strict=True)):
        nxt = spoken[i + 1].idx if i + 1 < len(spoken) else len(turns) + 1
        before = [
            {"tick": t.tick, "speaker": t.speaker, "text": t.text}
            for t in turns
            if t.idx < turn.idx and t.text.strip()
        ]
        said = [
            {"tick": t.tick, "text": t.text}
            for t in turns
            if turn.idx < t.idx < nxt and t.speaker == "user" and t.text.strip()
        ]
        did = [
            {"tick": a.tick, "action": a.text, "result": _result(a, end)}
            for a in actions
            if turn.tick <= a.tick < end
        ]
        data = {
            "round": i + 1,
            "rounds": len(spoken),
            "task": {"instruction": task["instruction"], "recipe": task["steps"]},
            "public_preferences": task["preferences"],
            "seconds_per_tick": ep.delta,
            "conversation_before": before[-HISTORY_LINES:],
            "earlier_lines_left_out": max(0, len(before) - HISTORY_LINES),
            "response": {
                "text": turn.text,
                "heard_at_tick": turn.tick,
                "generated_from_tick": _asked(turn),
            },
            "world_when_heard": _world(turn.tick, scenes[turn.tick], actions),
            "after_response": {
                "until_tick": end,
                "user_said": said,
                "user_actions": did,
                "objects_at_end": scenes[end],
            },
        }
        rounds.append(QualityRound(i, turn.idx, turn.tick, end, data))
    return tuple(rounds)
