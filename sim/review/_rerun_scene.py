"""The world, the agent's belief and the videos of an episode, written to a Rerun recording.

(The entity paths and why poses come from a replay are in ``_rerun``'s docstring.) A box is
written only when its object changed since the box last written for it: moved or turned beyond
a tolerance, resized, recoloured (held), relabelled or given new attributes; so a resting
object costs one entry, whatever the episode's length.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from sim.review._belief import Mismatch, mismatches
from sim.world import Node, SceneGraph
from storage import EpisodeRecord, Project

POS_TOL = 5e-4  # metres: closer than this to the box written, an object has not moved
YAW_TOL = 1e-3  # radians

RGB = tuple[int, int, int]
COLOURS: dict[str, RGB] = {
    "red": (214, 54, 48), "green": (62, 160, 80), "blue": (52, 101, 214),
    "yellow": (232, 196, 40), "orange": (236, 128, 30), "purple": (136, 78, 186),
    "brown": (139, 90, 52), "black": (55, 55, 60), "white": (236, 236, 232),
    "grey": (150, 150, 150), "gray": (150, 150, 150),
}  # fmt: skip
HELD: RGB = (242, 153, 26)  # the episode workspace's 3D scene draws a held object orange too
BASE: RGB = (115, 153, 217)
SURFACE: RGB = (191, 179, 158)
GHOST: RGB = (230, 38, 38)
RELATION: dict[str, RGB] = {"on": (90, 90, 90), "in": (40, 110, 200)}


class Out:
    """One recording being written, on the episode's two timelines."""

    def __init__(self, rr: ModuleType, rec: Any, tick_s: float) -> None:
        self.rr, self.rec, self.tick_s = rr, rec, tick_s

    def at(self, tick: int, seconds: float | None = None) -> None:
        self.rec.set_time("tick", sequence=tick)
        self.rec.set_time("sim_time", duration=tick * self.tick_s if seconds is None else seconds)

    def log(self, path: Sequence[str], *what: Any) -> None:
        self.rec.log(list(path), *what)

    def text(self, entity: str, tick: int, text: str, level: str) -> None:
        self.at(tick)
        self.rec.log(entity, self.rr.TextLog(text, level=level))

    def columns(self, entity: str | list[str], ticks: Sequence[int], columns: Any,
                seconds: Sequence[float] | None = None) -> None:  # fmt: skip
        secs = [t * self.tick_s for t in ticks] if seconds is None else list(seconds)
        if not isinstance(entity, str):  # send_columns takes a path, not its parts
            entity = "/".join(self.rr.escape_entity_path_part(p) for p in entity)
        self.rec.send_columns(entity, indexes=[
            self.rr.TimeColumn("tick", sequence=list(ticks)),
            self.rr.TimeColumn("sim_time", duration=secs),
        ], columns=columns)  # fmt: skip


@dataclass(frozen=True)
class Box:
    pos: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float
    colour: RGB
    label: str
    solid: bool
    kind: str
    attrs: str

    def same(self, other: Box) -> bool:
        """Whether ``other`` draws as this box (poses within the tolerances)."""
        return (
            (self.colour, self.label, self.solid, self.kind, self.attrs)
            == (other.colour, other.label, other.solid, other.kind, other.attrs)
            and _close(self.pos, other.pos, POS_TOL) and _close(self.size, other.size, POS_TOL)
            and abs(self.yaw - other.yaw) <= YAW_TOL
        )  # fmt: skip

    def archetypes(self, rr: ModuleType) -> tuple[Any, ...]:
        fill = rr.components.FillMode.Solid if self.solid else rr.components.FillMode.MajorWireframe
        return (
            rr.Boxes3D(
                centers=[self.pos], half_sizes=[self.size], colors=[self.colour],
                rotation_axis_angles=[rr.RotationAxisAngle(axis=(0, 0, 1), radians=self.yaw)],
                labels=[self.label], fill_mode=fill,
            ),
            rr.AnyValues(type=self.kind, attrs=self.attrs),
        )  # fmt: skip


def _close(a: Iterable[float], b: Iterable[float], tol: float) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def _attrs(n: Node) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in sorted(n.attrs.items()))  # fmt: skip


def object_box(n: Node, held: bool) -> Box:
    frame = bool(n.tags & {"fixed", "surface", "container"})  # drawn open: what is in it shows
    colour = HELD if held else COLOURS.get(n.color or "", SURFACE if frame else BASE)
    return Box(n.pos, n.size, n.yaw, colour, f"{n.id} (held)" if held else n.id, not frame,
               n.type, _attrs(n))  # fmt: skip


def ghost_box(n: Node, wrong: list[Mismatch]) -> Box:
    said = "; ".join(f"{m.what}: world {m.world}, believed {m.belief}" for m in wrong)
    return Box(n.pos, n.size, n.yaw, GHOST, f"{n.id}? {said}", False, n.type, _attrs(n))


class SceneWriter:
    """Writes the world tick by tick (call :meth:`tick` in tick order), and the belief ghosts."""

    def __init__(self, out: Out, beliefs: list[tuple[int, SceneGraph]]) -> None:
        self.out = out
        self.beliefs = beliefs
        self.boxes: dict[str, Box] = {}  # what is on screen now, per object
        self.ghosts: dict[str, Box] = {}
        self.edges: tuple[tuple[str, str, str, Any, Any], ...] = ()
        self.seen: set[str] = set()
        self.box_updates = self.relation_updates = self.ghost_updates = 0
        self._next_belief = 0
        self._belief: SceneGraph | None = None

    def tick(self, g: SceneGraph) -> None:
        out, rr = self.out, self.out.rr
        out.at(g.tick)
        held = g.held()
        shown = {k: object_box(n, k == held) for k, n in g.nodes.items() if n.visible or k == held}
        self.box_updates += self._update(("world", "objects"), self.boxes, shown)
        self.seen |= shown.keys()
        edges = tuple(sorted(
            (kind, a, b, self.boxes[a].pos, self.boxes[b].pos)
            for kind, a, b in g.relations if a in self.boxes and b in self.boxes
        ))  # fmt: skip
        if edges != self.edges:
            self.edges = edges
            self.relation_updates += 1
            if edges:
                out.log(("world", "relations"), rr.LineStrips3D(
                    [[pa, pb] for _, _, _, pa, pb in edges],
                    labels=[kind for kind, *_ in edges],
                    colors=[RELATION.get(kind, (120, 120, 120)) for kind, *_ in edges],
                    radii=[0.002] * len(edges),
                ))  # fmt: skip
            else:
                out.log(("world", "relations"), rr.Clear(recursive=False))
        while (self._next_belief < len(self.beliefs)
               and self.beliefs[self._next_belief][0] <= g.tick):  # fmt: skip
            self._belief = self.beliefs[self._next_belief][1]
            self._next_belief += 1
        if self._belief is not None:
            wrong = mismatches(g, self._belief)
            ghosts = {
                k: ghost_box(self._belief.nodes[k], [m for m in wrong if m.obj == k])
                for k in sorted({m.obj for m in wrong} & set(self._belief.nodes))
            }
            self.ghost_updates += self._update(("belief", "objects"), self.ghosts, ghosts)

    def _update(self, root: tuple[str, str], now: dict[str, Box], want: dict[str, Box]) -> int:
        """Write the boxes of ``want`` that differ from ``now`` and clear the ones gone; returns
        how many entries that took."""
        rr, n = self.out.rr, 0
        for k in sorted(now.keys() - want.keys()):
            self.out.log((*root, k), rr.Clear(recursive=False))
            del now[k]
            n += 1
        for k, box in want.items():
            old = now.get(k)
            if old is None or not old.same(box):
                self.out.log((*root, k), *box.archetypes(rr))
                now[k] = box
                n += 1
        return n


# ---- videos ---------------------------------------------------------------------------------
def shown_at(times: Sequence[float], tick_s: float) -> list[tuple[int, int, float]]:
    """(frame, tick, seconds) of the frames that are ever on screen, each at the first tick it
    shows (the episode workspace shows at tick t the last frame starting at or before t·Δ);
    of the frames before episode time 0 only the last, at 0."""
    out: list[tuple[int, int, float]] = []
    for i, s in enumerate(times):
        tick = max(0, math.ceil(s / tick_s - 1e-6))
        if s <= 0 and out:
            out.pop()  # superseded at tick 0
        out.append((i, tick, max(0.0, s)))
    return out


def write_videos(out: Out, project: Project, ep: EpisodeRecord) -> tuple[dict[str, str], int]:
    """Every stored video of ``ep`` at ``video/<camera>``; returns how each went in and the
    number of frames written."""
    from storage.media import index_video

    offsets = {str(v.get("camera")): float(v.get("offset_s", 0.0))
               for v in ep.config.get("videos", []) if isinstance(v, dict)}  # fmt: skip
    how: dict[str, str] = {}
    frames = 0
    for art in project.episodes.artifacts(ep.id):
        if art.kind != "video":
            continue
        path = project.media_path(art.media_sha)
        index = index_video(path)
        offset = offsets.get(art.camera, 0.0)
        entity = ["video", art.camera]
        rr = out.rr
        try:
            asset = rr.AssetVideo(path=path, media_type="video/mp4")
            stamps = asset.read_frame_timestamps_nanos()
            n = index.frame_count
            why = "" if len(stamps) == n else f"Rerun reads {len(stamps)} frames, the file {n}"
        except (RuntimeError, ValueError) as err:  # Rerun's reader: not MP4, or its codec
            asset, stamps, why = None, None, str(err)
        if asset is not None and stamps is not None and not why:
            keep = shown_at([(s - stamps[0]) / 1e9 + offset for s in stamps], ep.delta)
            out.rec.log(entity, asset, static=True)
            out.columns(entity, [t for _, t, _ in keep],
                        rr.VideoFrameReference.columns_nanos([stamps[i] for i, _, _ in keep]),
                        seconds=[s for _, _, s in keep])  # fmt: skip
            how[art.camera] = f"the MP4 ({index.codec}) as AssetVideo, {len(keep)} frames"
        else:
            keep = shown_at([index.time_of(i) + offset for i in range(index.frame_count)],
                            ep.delta)  # fmt: skip
            _jpeg_frames(out, entity, path, index, keep)
            how[art.camera] = f"{len(keep)} JPEG frames (Rerun cannot play the file: {why})"
        frames += len(keep)
    return how, frames


def _jpeg_frames(out: Out, entity: list[str], path: Any, index: Any,
                 keep: list[tuple[int, int, float]]) -> None:  # fmt: skip
    import cv2

    from storage.media import FrameSource

    source = FrameSource(path, index, store_path=None)
    try:
        for i, tick, seconds in keep:
            bgr = cv2.cvtColor(source.frame(i), cv2.COLOR_RGB2BGR)
            ok, data = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, 85])
            if not ok:
                raise ValueError(f"{path}: frame {i} could not be encoded as JPEG")
            out.at(tick, seconds)
            out.log(entity, out.rr.EncodedImage(contents=data.tobytes(), media_type="image/jpeg"))
    finally:
        source.close()
