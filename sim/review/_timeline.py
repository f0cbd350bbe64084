"""A recorded episode as timeline items on one time base (world ticks), for the episode view.

Everything comes from the stored trace, so an episode recorded by any run (or imported) opens
the same way, and an episode from before dialogue existed simply has fewer tracks. Items:

- ``actions``: each submitted action as a span from its tick to when it finished (``source``:
  user, harness, agent …); ``rejections``: refused actions as marks, with the failed checks;
- ``user`` / ``assistant``: utterances as marks (an assistant flag is kind ``flag``);
- ``replies``: each delivered assistant reply as an arrow from the tick it was generated to the
  tick it was heard, ``stale`` when the scene graph changed in between;
- ``events``: trigger, commit and resolve marks; an error's harness hold as a span;
  ``windows``: a proactive request's window [t_c, H) as a span;
- ``contract``: the tick each goal condition became (and stayed) true;
- ``gates``: rubric evidence marks that raters drew on the episode's own videos (matched by
  content), each with its subgoal, gate and the answer given there (kind: pass, fail, na,
  unresolved; ``evidence`` when the gate has no answer yet);
- ``belief``: each time the agent stated what it believed, marked wrong when the world at that
  tick disagrees;
- ``anomalies``: injected world anomalies, and spans where a person pushed a body by hand in
  a live run (``perturbed``: from there the trace does not replay);
- ``takeovers``: spans where a person drove the arm in a live run (who, why; from there the
  trace does not replay either), and the labelled spans of a demonstration (its ``Span`` s);

Every item keeps ``ref``, an index into its source list, so a click can find the row behind it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from annotation import UserError
from sim.contracts import Contract, Truth
from sim.episode import GraphCursor, accepted_events, changed
from sim.review._belief import mismatches
from sim.world import SceneGraph
from storage import (
    ActionRecord,
    ConditionRecord,
    EpisodeError,
    EpisodeRecord,
    EventRecord,
    ExchangeRecord,
    Project,
    TickRecord,
    TurnRecord,
)

TRACKS = (
    "video", "actions", "rejections", "user", "assistant", "replies", "events", "windows",
    "contract", "gates", "belief", "anomalies", "takeovers",
)  # fmt: skip


Vec3 = tuple[float, float, float]


def _m(mm: list[int]) -> Vec3:
    return (mm[0] / 1000.0, mm[1] / 1000.0, mm[2] / 1000.0)


@dataclass(frozen=True)
class Item:
    """One thing on the timeline: a mark (``end == start``), a span or an arrow."""

    track: str
    start: int
    end: int
    label: str
    kind: str = ""
    ref: int = -1


@dataclass
class EpisodeTimeline:
    episode: EpisodeRecord
    items: list[Item]
    turns: list[TurnRecord]
    actions: list[ActionRecord]
    events: list[EventRecord]
    conditions: list[ConditionRecord]
    graphs: GraphCursor
    tracks: tuple[str, ...] = field(default=TRACKS)
    #: for a fork: the episode it branched from, and the first tick the two worlds differ
    parent: EpisodeTimeline | None = None
    diverges_at: int | None = None
    #: what the agent believed the scene was, at the ticks it said so
    beliefs: list[tuple[int, SceneGraph]] = field(default_factory=list)
    #: every view or prompt sent to a participant, and its reply (parsed when asked for)
    exchanges: list[ExchangeRecord] = field(default_factory=list)
    #: per goal condition, the tick spans it held in (None: no contract to evaluate)
    holds: list[list[tuple[int, int]]] | None = None
    _arm_cache: tuple[list[Vec3 | None], list[list[Vec3]]] | None = field(default=None, repr=False)

    def arm_path(self, tick: int) -> list[tuple[float, float, float]]:
        """The end effector's positions (metres) from the start up to ``tick``: the arm's path
        (physics episodes record it; others have none)."""
        ee = self._arm()[0]
        i = self.graphs.index(tick)
        return [p for p in ee[: i + 1] if p is not None]

    def contacts_at(self, tick: int) -> list[tuple[float, float, float]]:
        """Where objects touched anything at ``tick`` (metres; physics episodes only)."""
        return self._arm()[1][self.graphs.index(tick)]

    def _arm(self) -> tuple[list[Vec3 | None], list[list[Vec3]]]:
        if self._arm_cache is None:
            ee: list[Vec3 | None] = []
            contacts: list[list[Vec3]] = []
            for r in self.graphs.rows:
                c = json.loads(r.controller_json or "{}")
                p = c.get("ee")
                ee.append(_m(p) if isinstance(p, list) and len(p) == 3 else None)
                contacts.append([_m(q) for q in c.get("contacts") or [] if len(q) == 3])
            self._arm_cache = (ee, contacts)
        return self._arm_cache

    def exchange_at(self, party: str, tick: int) -> ExchangeRecord | None:
        """What ``party`` (assistant, user, agent) was last shown at or before ``tick``."""
        best = None
        for x in self.exchanges:
            if x.party == party and x.tick <= tick:
                best = x
            elif x.tick > tick:
                break
        return best

    def belief_at(self, tick: int) -> SceneGraph | None:
        """The agent's latest belief at or before ``tick`` (None if it stated none yet)."""
        best = None
        for t, g in self.beliefs:
            if t <= tick:
                best = g
            else:
                break
        return best

    @property
    def ticks(self) -> int:
        """The episode's length (a running one: its last stored tick)."""
        return max(self.episode.ticks, self.graphs.ticks[-1])

    @property
    def tick_s(self) -> float:
        return self.episode.delta

    def on(self, track: str) -> list[Item]:
        return [i for i in self.items if i.track == track]

    def turn_at(self, tick: int) -> int | None:
        """The index of the last turn said at or before ``tick`` (the transcript's current row)."""
        best = None
        for k, t in enumerate(self.turns):
            if t.tick <= tick:
                best = k
            else:
                break
        return best

    def contract_at(self, tick: int) -> list[tuple[str, bool, int | None]]:
        """Per goal condition: its text, whether it holds at ``tick``, and since when (from the
        spans it held in, re-evaluated on the trace; an import: its stated witness ticks)."""
        out = []
        for k, c in enumerate(self.conditions):
            if self.holds is not None and k < len(self.holds):
                end = self.ticks
                span = next(
                    ((a, b) for a, b in self.holds[k] if a <= tick < b or a <= tick <= b == end),
                    None,
                )
                out.append((c.text, span is not None, None if span is None else span[0]))
                continue
            w = c.witness_tick
            out.append((c.text, w is not None and w <= tick, w))
        return out


def load_timeline(
    project: Project, episode_id: str, *, with_parent: bool = True
) -> EpisodeTimeline:
    """Read one stored episode's trace into timeline items (see the module docstring); a fork
    comes with its parent's timeline and the tick the branches diverge."""
    eps = project.episodes
    ep = eps.get(episode_id)
    actions, turns = eps.actions(ep.id), eps.turns(ep.id)
    events, conditions = eps.events(ep.id), eps.conditions(ep.id)
    rows = eps.ticks(ep.id)
    if rows and rows[0].graph_json is None and ep.parent_id is not None:
        # a fork that stored only what followed its fork tick: the parent's ticks lead in
        rows = eps.ticks(ep.parent_id, 0, rows[0].tick) + rows
    if not rows:  # nothing to show, not a broken trace
        raise EpisodeError(
            f"episode {ep.id[:8]} has no recorded tick ({ep.status.value}"
            + (": it is being recorded, or the process that recorded it died before runs said "
               "how they end" if ep.status.value == "running" else "")
            + ")"
        )  # fmt: skip
    graphs = GraphCursor(rows)
    items: list[Item] = []
    for k, a in enumerate(actions):
        if a.accepted:
            end = a.finished_tick if a.finished_tick is not None else ep.ticks
            kind = a.source.value if hasattr(a.source, "value") else str(a.source)
            failed = (a.outcome or "").startswith("failed")
            items.append(Item("actions", a.tick, max(end, a.tick), a.text,
                              "failed" if failed else kind, k))  # fmt: skip
        elif json.loads(a.failed_json):
            why = "; ".join(f["message"] for f in json.loads(a.failed_json))
            items.append(Item("rejections", a.tick, a.tick, f"{a.text}: {why}", "rejected", k))
    for k, t in enumerate(turns):
        if t.speaker not in ("user", "assistant") or not (t.text or t.flag):
            continue
        kind = "flag" if t.flag else (t.move or "say")
        items.append(Item(t.speaker, t.tick, t.tick, t.text or f"[{t.flag}]", kind, k))
        asked = json.loads(t.meta_json or "{}").get("asked")
        if t.speaker == "assistant" and isinstance(asked, int) and asked < t.tick:
            stale = _changed_between(graphs, asked, t.tick)
            items.append(Item("replies", asked, t.tick, t.text or f"[{t.flag}]",
                              "stale" if stale else "fresh", k))  # fmt: skip
    for k, e in enumerate(events):
        name = f"{e.event_id} ({e.category}{' ' + e.type if e.type else ''})"
        for what, tick in (("trigger", e.trigger_tick), ("commit", e.commit_tick),
                           ("resolve", e.resolve_tick)):  # fmt: skip
            if tick is not None:
                label = f"{name}: {what}" + (f" → {e.resolution}" if what == "resolve" else "")
                items.append(Item("events", tick, tick, label, what, k))
        if e.category == "error" and e.trigger_tick is not None:
            end = e.resolve_tick if e.resolve_tick is not None else ep.ticks
            items.append(Item("events", e.trigger_tick, end, f"{name}: harness holds the queue",
                              "hold", k))  # fmt: skip
        data = json.loads(e.data_json or "{}")
        if e.category == "request" and isinstance(data.get("t_c"), int):
            end = data.get("h") if isinstance(data.get("h"), int) else ep.ticks
            items.append(Item("windows", data["t_c"], end,
                              f"{name}: tell the user in [t_c, H)", "request", k))  # fmt: skip
    spans = _predicate_spans(ep, graphs, actions, conditions)
    if spans is not None:
        for k, runs in enumerate(spans):
            text = conditions[k].text if k < len(conditions) else f"condition {k}"
            for start, end in runs:
                items.append(Item("contract", start, end, f"true: {text}", "true", k))
                if end < tl_end(ep, graphs):  # it stopped holding: marked where it did
                    items.append(Item("contract", end, end, f"false again: {text}", "false", k))
    else:  # no contract to evaluate (an imported episode): its stated witnesses
        for k, c in enumerate(conditions):
            if c.witness_tick is not None:
                items.append(Item("contract", c.witness_tick, c.witness_tick, f"true: {c.text}",
                                  "true", k))  # fmt: skip
    offsets = {str(v.get("camera")): float(v.get("offset_s", 0.0))
               for v in ep.config.get("videos", []) if isinstance(v, dict)}  # fmt: skip
    for k, art in enumerate(eps.artifacts(ep.id)):
        if art.kind == "video" and art.fps > 0:
            start = round(offsets.get(art.camera, 0.0) / ep.delta)
            length = round(art.frames / art.fps / ep.delta)
            items.append(Item("video", start, start + length,
                              f"{art.camera} video: {art.frames} frames", "video", k))  # fmt: skip
            items += _gate_items(project, art.media_sha, art.fps, start, ep.delta, art.camera)
    for k, an in enumerate(eps.anomalies(ep.id)):
        items.append(Item("anomalies", an.tick, an.tick, f"{an.kind} {an.obj}", an.kind, k))
    for k, (a, b) in enumerate(ep.config.get("perturbed") or []):
        why = "a body pushed by hand (live run): from here the world is not the decisions' own"
        items.append(Item("anomalies", int(a), int(b), why, "perturbed", k))
    items += _takeover_items(ep)
    beliefs = [(bt, SceneGraph.from_json(json.loads(g))) for bt, g in eps.beliefs(ep.id)]
    for bt, believed in beliefs:
        wrong = mismatches(graphs.graph_at(bt), believed)
        label = f"belief: {len(wrong)} thing(s) not so" if wrong else "belief matches the world"
        items.append(Item("belief", bt, bt, label, "wrong" if wrong else "right"))
    items.sort(key=lambda i: (TRACKS.index(i.track), i.start, i.end))
    exchanges = sorted(eps.exchanges(ep.id), key=lambda x: (x.tick, x.idx))
    tl = EpisodeTimeline(ep, items, turns, actions, events, conditions, graphs, beliefs=beliefs,
                         exchanges=exchanges, holds=spans)  # fmt: skip
    if with_parent and ep.parent_id is not None:
        tl.parent = load_timeline(project, ep.parent_id, with_parent=False)
        tl.diverges_at = diverges_at(tl.parent.graphs.rows, eps.ticks(ep.id))
    return tl


def _takeover_items(ep: EpisodeRecord) -> list[Item]:
    """A live run's takeovers (``config.takeovers``) and a demonstration's own labelled spans
    (``config.spans``), as spans labelled with who and why."""
    out = []
    for k, s in enumerate(ep.config.get("takeovers") or []):
        why = s.get("why") or "took over"
        out.append(Item("takeovers", int(s["start"]), int(s["end"]),
                        f"{s.get('who')} took the arm over: {why}", "takeover", k))  # fmt: skip
    for k, s in enumerate(ep.config.get("spans") or [] if ep.config.get("teleop") else []):
        kind = str(s.get("kind") or "takeover")
        why = f": {s['why']}" if s.get("why") else ""
        out.append(Item("takeovers", int(s["start"]), int(s["end"]),
                        f"{s.get('who')} ({kind}){why}", kind, k))  # fmt: skip
    return out


def _gate_items(
    project: Project, sha: str, fps: float, offset: int, delta: float, camera: str
) -> list[Item]:
    """The rubric evidence on one of the episode's videos, placed at its ticks."""
    out = []
    for k, ev in enumerate(project.annotations.gate_evidence(sha)):
        where = " ".join(x for x in (ev.subgoal, ev.gate) if x) or "evidence"
        said = ev.answer or "evidence, no answer yet"
        note = f" — {ev.note}" if ev.note else ""
        a = offset + round(ev.start_frame / fps / delta)
        b = offset + round(ev.end_frame / fps / delta)
        out.append(Item("gates", a, max(a, b), f"{ev.rater_id} · {where}: {said}{note} "
                        f"({camera} frames {ev.start_frame}–{ev.end_frame})",
                        ev.answer or "evidence", k))  # fmt: skip
    return out


def _changed_between(graphs: GraphCursor, start: int, end: int) -> bool:
    """Whether the scene graph changed after ``start`` up to ``end`` (a reply is stale)."""
    i, j = graphs.index(start), graphs.index(end)
    return any(changed(graphs.diff(k)) for k in range(i + 1, j + 1))


def diverges_at(parent: list[TickRecord], fork: list[TickRecord]) -> int | None:
    """The first tick both branches stored with different state hashes (or where one ends);
    a fork that stored only what followed its fork tick is compared from there."""
    mine = {r.tick: r.state_hash for r in fork}
    theirs = {r.tick: r.state_hash for r in parent}
    for t in sorted(set(mine) & set(theirs)):
        if mine[t] != theirs[t]:
            return t
    if not mine or not theirs or max(mine) == max(theirs):
        return None
    return min(max(mine), max(theirs)) + 1


def tl_end(ep: EpisodeRecord, graphs: GraphCursor) -> int:
    return max(ep.ticks, graphs.ticks[-1])


def _predicate_spans(
    ep: EpisodeRecord, graphs: GraphCursor, actions: list[ActionRecord],
    conditions: list[ConditionRecord],
) -> list[list[tuple[int, int]]] | None:  # fmt: skip
    """Per goal condition, the tick spans in which it held, evaluated on the stored graphs and
    accepted actions (None when the episode's contract cannot be read back: an import)."""
    try:
        contract = Contract.from_json(json.loads(ep.contract_json))
    except (ValueError, TypeError, UserError):
        return None
    events = accepted_events(actions)
    event_ticks = {e.tick for e in events}
    n = len(contract.predicates)
    runs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    since: list[int | None] = [None] * n
    end = tl_end(ep, graphs)
    for i, row in enumerate(graphs.rows):
        t = row.tick
        if i and not changed(graphs.diff(i)) and t not in event_ticks:
            continue  # nothing a predicate reads changed: the values stand
        graph = graphs.graph_at(t)
        seen = [e for e in events if e.tick is not None and e.tick <= t]
        for k, p in enumerate(contract.predicates):
            holds = p.evaluate(graph, seen) is Truth.T
            if holds and since[k] is None:
                since[k] = t
            elif not holds and since[k] is not None:
                start = since[k]
                assert start is not None
                runs[k].append((start, t))
                since[k] = None
    for k in range(n):
        if since[k] is not None:
            start = since[k]
            assert start is not None
            runs[k].append((start, end))
    return runs
