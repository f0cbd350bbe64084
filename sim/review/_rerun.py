"""A stored episode as a Rerun recording (``.rrd``), for people who review episodes in Rerun.

Everything comes from what the episode workspace shows: :func:`load_timeline` for the tracks,
the world at every tick, the stored videos. Two timelines: ``tick`` (sequence) and ``sim_time``
(duration, tick × Δ). Entities:

==========================  ===================================================================
``episode``                 TextDocument (markdown, static): what ran, the contract, metrics
``world/objects/<id>``      Boxes3D at the object's pose, written when it changes (orange while
                            held; wireframe for fixed things, surfaces and containers); its
                            type and attributes ride along as ``type`` / ``attrs``
``world/relations``         LineStrips3D between the centres of related objects, labelled
                            ``on`` / ``in`` …, written when the relations or their ends move
``belief/objects/<id>``     red wireframe Boxes3D where the agent's latest stated belief puts an
                            object it gets wrong (see :func:`mismatches`), cleared when right
``belief/statements``       TextLog: each stated belief, with what it got wrong
``video/<camera>``          AssetVideo + VideoFrameReference when Rerun reads the stored file
                            (MP4 with H.264/H.265/AV1); otherwise one JPEG EncodedImage a frame
``actions``                 TextLog: each accepted action at its tick, its outcome when done
``rejections``              TextLog (WARN): refused actions and the failed checks
``dialogue/user``,          TextLog: utterances at their ticks (an assistant's flag is a WARN)
``dialogue/assistant``
``dialogue/replies``        TextLog at the tick a reply was heard, WARN when it was stale
``events``,                 TextLog: event trigger/commit/resolve and harness holds; a
``events/windows``          request's window
``anomalies``               TextLog (WARN): injected anomalies, spans pushed by hand
``takeovers``               TextLog (WARN): where a person took the arm over (who, why) and
                            where they handed it back; a demonstration's labelled spans
``gates``                   TextLog: rubric evidence raters marked on the episode's videos
``contract/<predicate>``    Scalars 1/0 (held / not) per goal condition, written where it changes
==========================  ===================================================================

Poses come from replaying the episode (:class:`WorldCursor`, every tick's state hash checked
against the stored one): the stored trace has whole graphs only at keyframes and, between them,
diffs that say how far things moved, not where to. An episode that cannot be replayed (an
import, a changed scenario, a run pushed by hand) is written from its stored graphs, whose poses
are exact at its keyframes (every state of an import), and the export says so.

rerun-sdk is an optional extra (``pip install 'rollout-workbench[rerun]'``): it is imported
here, when an export runs, so the workbench starts without it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from annotation import UserError
from sim.review._belief import mismatches
from sim.review._rerun_scene import Out, SceneWriter, write_videos
from sim.review._timeline import EpisodeTimeline, Item, load_timeline
from sim.review._worlds import WorldCursor
from sim.world import SceneGraph
from storage import Project

INSTALL_HINT = "pip install 'rollout-workbench[rerun]'"
APPLICATION_ID = "rollout-workbench"


class RerunMissingError(UserError, RuntimeError):
    """rerun-sdk is not installed; the message says how to install it."""


@dataclass(frozen=True)
class RerunExport:
    """What one export wrote (counts are entries in the recording)."""

    path: Path
    episode_id: str
    first_tick: int
    last_tick: int
    tick_s: float
    poses: str  # "replayed" or "stored"
    poses_note: str
    objects: int
    box_updates: int
    relation_updates: int
    ghost_updates: int
    texts: dict[str, int] = field(default_factory=dict)
    predicates: int = 0
    videos: dict[str, str] = field(default_factory=dict)  # camera -> how its frames went in
    video_frames: int = 0
    bytes: int = 0

    def summary(self) -> str:
        size = (f"{self.bytes / 2**20:.1f} MB" if self.bytes >= 2**20
                else f"{self.bytes / 2**10:.0f} KB")  # fmt: skip
        lines = [
            f"wrote {self.path} ({size}): episode {self.episode_id[:8]}, ticks "
            f"{self.first_tick}–{self.last_tick} ({self.last_tick * self.tick_s:g} s)",
            f"  world: {self.objects} objects, {self.box_updates} box updates, "
            f"{self.relation_updates} relation updates; poses {self.poses_note}",
        ]
        if self.ghost_updates:
            lines.append(f"  belief: {self.ghost_updates} ghost updates where it was wrong")
        if self.texts:
            lines.append("  logs: " + ", ".join(f"{k} {n}" for k, n in self.texts.items()))
        if self.predicates:
            n = self.predicates
            lines.append(f"  contract: {n} predicate{'' if n == 1 else 's'} as 0/1 series")
        for cam, how in self.videos.items():
            lines.append(f"  video/{cam}: {how}")
        lines.append(f"open it with: rerun {self.path}")
        return "\n".join(lines)


def import_rerun() -> ModuleType:
    """The ``rerun`` module, or a :class:`RerunMissingError` saying how to install it."""
    try:
        import rerun
    except ImportError:
        raise RerunMissingError(
            f"exporting to Rerun needs rerun-sdk, which is not installed: {INSTALL_HINT}"
        ) from None
    return rerun


class _DivergedError(Exception):
    """The replay left the recorded states (its poses would be made up): use the stored ones."""

    def __init__(self, tick: int) -> None:
        super().__init__(tick)
        self.tick = tick


def export_rerun(project: Project, episode_id: str, path: Path | str) -> RerunExport:
    """Write one stored episode to ``path`` as a Rerun recording (see the module docstring).

    The file appears whole or not at all: it is written beside ``path`` and renamed at the end.
    """
    rr = import_rerun()
    tl = load_timeline(project, episode_id, with_parent=False)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.part")
    strict = rr.strict_mode()
    rr.set_strict_mode(True)  # a value Rerun cannot take is an error here, not a warning
    try:
        graphs, poses, note = _world_source(project, tl)
        try:
            result = _write(rr, project, tl, part, graphs, poses, note)
        except _DivergedError as d:  # start again, into a new file: no made-up pose stays
            note = f"from the stored graphs (the replay left the recorded states at tick {d.tick})"
            result = _write(rr, project, tl, part, _stored(tl), "stored", note)
        result = replace(result, path=path)
        os.replace(part, path)
    finally:
        rr.set_strict_mode(strict)
        part.unlink(missing_ok=True)
    return replace(result, bytes=path.stat().st_size)


def _world_source(project: Project, tl: EpisodeTimeline) -> tuple[Iterator[SceneGraph], str, str]:
    ep = tl.episode
    if ep.config.get("imported"):
        return _stored(tl), "stored", "as the bundle stated them"
    try:
        cursor = WorldCursor(project, ep.id)
    except UserError as why:  # not replayable (scenario changed, arm motion changed …)
        return _stored(tl), "stored", f"from the stored graphs (no replay: {why})"
    if cursor.demo_states is not None:
        note = "restored tick by tick from the demonstration's recorded MuJoCo states"
        return _replayed(cursor, tl), "replayed", note
    return _replayed(cursor, tl), "replayed", "replayed tick by tick from the recorded decisions"


def _stored(tl: EpisodeTimeline) -> Iterator[SceneGraph]:
    """The stored graphs where they change, and at each stated belief (an import stores its
    states only: the agent may speak between two)."""
    for t in sorted(set(tl.graphs.ticks) | {bt for bt, _ in tl.beliefs}):
        yield tl.graphs.graph_at(t).replace(tick=t)


def _replayed(cursor: WorldCursor, tl: EpisodeTimeline) -> Iterator[SceneGraph]:
    expected = {r.tick: r.state_hash for r in tl.graphs.rows}
    try:
        for t in range(tl.ticks + 1):
            reached = cursor.seek(t)
            if reached != t or (t in expected and cursor.state_hash() != expected[t]):
                raise _DivergedError(t)
            yield cursor.world.graph
    finally:
        cursor.close()


def _write(
    rr: ModuleType, project: Project, tl: EpisodeTimeline, part: Path,
    graphs: Iterator[SceneGraph], poses: str, note: str,
) -> RerunExport:  # fmt: skip
    ep = tl.episode
    rec = rr.RecordingStream(APPLICATION_ID, recording_id=ep.id)
    rec.set_log_time_enabled(False)  # the episode's own clocks only, not when this ran
    cameras = [a.camera for a in project.episodes.artifacts(ep.id) if a.kind == "video"]
    rec.save(part, default_blueprint=_blueprint(rr, cameras))
    try:
        rec.send_recording_name(f"{ep.scenario} {ep.id[:8]}")
        out = Out(rr, rec, ep.delta)
        rec.log("/", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
        rec.log("episode", rr.TextDocument(_document(project, tl), media_type="text/markdown"),
                static=True)  # fmt: skip
        scene = SceneWriter(out, tl.beliefs)
        first = last = None
        for graph in graphs:
            scene.tick(graph)
            first = graph.tick if first is None else first
            last = graph.tick
        texts = _texts(out, tl)
        predicates = _contract(out, tl)
        videos, frames = write_videos(out, project, ep)
        rec.flush()
    finally:
        rec.disconnect()  # closes the file (with its footer)
    return RerunExport(
        part, ep.id, first or 0, max(last or 0, tl.ticks), ep.delta, poses, note,
        objects=len(scene.seen), box_updates=scene.box_updates,
        relation_updates=scene.relation_updates, ghost_updates=scene.ghost_updates,
        texts=texts, predicates=predicates, videos=videos, video_frames=frames,
    )  # fmt: skip


# ---- logs -----------------------------------------------------------------------------------
_ENTITY = {
    "actions": "actions", "rejections": "rejections", "user": "dialogue/user",
    "assistant": "dialogue/assistant", "replies": "dialogue/replies", "events": "events",
    "windows": "events/windows", "belief": "belief/statements", "anomalies": "anomalies",
    "gates": "gates", "takeovers": "takeovers",
}  # fmt: skip
_DRAWN = ("video", "contract")  # tracks written as frames and series, not as log lines


def _texts(out: Out, tl: EpisodeTimeline) -> dict[str, int]:
    """Every timeline item but video and contract (drawn otherwise) as TextLog lines; a track
    this module does not know yet goes to an entity of its own name."""
    counts: dict[str, int] = {}
    for item in tl.items:
        if item.track in _DRAWN:
            continue
        entity = _ENTITY.get(item.track, item.track)
        for tick, text, level in _lines(tl, item):
            out.text(entity, tick, text, level)
            counts[entity] = counts.get(entity, 0) + 1
    return counts


def _lines(tl: EpisodeTimeline, i: Item) -> list[tuple[int, str, str]]:
    """(tick, text, level) of one timeline item."""
    if i.track == "actions":
        a = tl.actions[i.ref]
        lines = [(i.start, f"{i.label} [{a.source}]", "INFO")]
        if a.outcome is not None:
            failed = a.outcome.startswith("failed")
            lines.append((i.end, f"{i.label}: {a.outcome}", "ERROR" if failed else "INFO"))
        return lines
    if i.track == "rejections":
        return [(i.start, f"refused: {i.label}", "WARN")]
    if i.track in ("user", "assistant"):
        return [(i.start, i.label, "WARN" if i.kind == "flag" else "INFO")]
    if i.track == "replies":
        stale = i.kind == "stale"
        why = " — the world changed in between (stale)" if stale else ""
        return [(i.end, f"heard a reply generated at tick {i.start}{why}: {i.label}",
                 "WARN" if stale else "INFO")]  # fmt: skip
    if i.track == "events" and i.kind == "hold":
        return [(i.start, f"{i.label} until tick {i.end}", "WARN")]
    if i.track == "windows":
        return [(i.start, f"{i.label}: ticks {i.start}–{i.end}", "INFO")]
    if i.track == "belief":
        believed = tl.belief_at(i.start)
        wrong = [] if believed is None else mismatches(tl.graphs.graph_at(i.start), believed)
        detail = "; ".join(f"{m.obj} {m.what}: world {m.world}, believed {m.belief}"
                           for m in wrong)  # fmt: skip
        return [(i.start, f"{i.label}: {detail}" if detail else i.label,
                 "WARN" if wrong else "INFO")]  # fmt: skip
    if i.track == "anomalies":
        until = f" (until tick {i.end})" if i.end > i.start else ""
        return [(i.start, f"anomaly: {i.label}{until}", "WARN")]
    if i.track == "takeovers":
        return [(i.start, f"{i.label} (ticks {i.start}–{i.end})", "WARN"),
                (i.end, f"takeover ends: {i.label}", "INFO")]  # fmt: skip
    if i.track == "gates":
        level = "WARN" if i.kind == "fail" else "INFO"
        return [(i.start, f"{i.label} (until tick {i.end})", level)]
    return [(i.start, i.label, "INFO")]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "condition"


def _contract(out: Out, tl: EpisodeTimeline) -> int:
    """Each goal condition as a 0/1 series, written at tick 0, where it changes and at the end
    (drawn as steps), so the plot reads like the timeline's contract track."""
    values = [tl.contract_at(t) for t in range(tl.ticks + 1)]
    used: set[str] = set()
    for k, c in enumerate(tl.conditions):
        name = _slug(c.text)
        if name in used:
            name = f"{name}_{k}"
        used.add(name)
        entity = f"contract/{name}"
        out.rec.log(entity, out.rr.SeriesLines(
            names=[c.text], interpolation_mode=out.rr.components.InterpolationMode.StepAfter,
        ), static=True)  # fmt: skip
        last = len(values) - 1
        ticks = [t for t in range(last + 1)
                 if t in (0, last) or values[t][k][1] != values[t - 1][k][1]]  # fmt: skip
        out.columns(entity, ticks, out.rr.Scalars.columns(
            scalars=[1.0 if values[t][k][1] else 0.0 for t in ticks]))  # fmt: skip
    return len(tl.conditions)


# ---- the episode's page and the viewer's layout -----------------------------------------------
def _document(project: Project, tl: EpisodeTimeline) -> str:
    ep = tl.episode
    cfg = ep.config
    rows = [
        ("scenario", f"{ep.scenario} (family {ep.family})"), ("mode", ep.mode.value),
        ("agent", ep.agent), ("status", ep.status.value),
        ("ticks", f"{tl.ticks} × {ep.delta:g} s = {tl.ticks * ep.delta:g} s"),
        ("seed", str(ep.seed)), ("started", ep.started), ("ended", ep.ended or "—"),
    ]  # fmt: skip
    if cfg.get("interactive"):
        persona = cfg.get("persona")
        who = persona.get("name") if isinstance(persona, dict) else persona
        rows += [("persona", str(who)), ("user", str(cfg.get("user"))),
                 ("assistant", str(cfg.get("assistant")))]  # fmt: skip
    if cfg.get("imported"):
        rows.append(("imported from", str(cfg.get("bundle"))))
    if ep.parent_id is not None:
        rows.append(("forked from", f"{ep.parent_id[:8]} at tick {ep.fork_tick}"))
    out = [f"# Episode {ep.id[:8]}", "", "| | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in rows]
    out += ["", "## Contract (at the end)", ""]
    for text, holds, since in tl.contract_at(tl.ticks):
        out.append(f"- [{'x' if holds else ' '}] {text}"
                   + (f" (since tick {since})" if holds and since is not None else ""))  # fmt: skip
    metrics = project.episodes.metrics(ep.id)
    if metrics:
        out += ["", "## Metrics", "", "| metric | value |", "|---|---|"]
        out += [f"| {k} | {v:g} |" for k, v in sorted(metrics.items())]
    return "\n".join(out) + "\n"


def _blueprint(rr: ModuleType, cameras: list[str]) -> Any:
    """The viewer's opening layout: the scene and the videos left, the logs, the contract and
    the episode's page right (the user may rearrange; Rerun keeps their layout)."""
    rrb = rr.blueprint
    left = [rrb.Spatial3DView(name="scene (world, belief)", origin="/",
                              contents=["+ /world/**", "+ /belief/objects/**"])]  # fmt: skip
    left += [rrb.Spatial2DView(name=cam, origin=f"/video/{rr.escape_entity_path_part(cam)}")
             for cam in cameras]  # fmt: skip
    right = [
        rrb.TextLogView(name="trace", origin="/"),  # every TextLog entity
        rrb.TimeSeriesView(name="contract", origin="/contract"),
        rrb.TextDocumentView(name="episode", origin="/episode"),
    ]
    return rrb.Blueprint(rrb.Horizontal(rrb.Vertical(*left), rrb.Vertical(*right)),
                         collapse_panels=False)  # fmt: skip
