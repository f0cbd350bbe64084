"""Episode bundles (``workbench-episode-bundle/1``): episodes recorded by any harness.

A bundle is a folder with ``episode.json`` (what ran) and ``stream.jsonl`` (what happened, one
JSON object per line, by tick), and optionally videos. docs/episode-bundle.md is the format.
:func:`read_bundle` validates every line and names the file, line and field of the first
problem; :func:`sim.review.import_bundle` stores the episode.

A bundle comes from elsewhere, so it is read as hostile (:mod:`storage.guard`): every file it
names must resolve inside the bundle folder (no absolute path, no ``..``, no symlink out, or a
private file would be copied into the project); the manifest and the stream are refused by
size before they are read, the stream is read a bounded line at a time and never whole, JSON
nesting, integers (SQLite's range), texts, the stream's lines (and the states they expand to),
the number of videos, goal conditions and events are bounded, and each refusal is one line
naming the file and the field. States are kept as the scene-graph text the project stores,
not as parsed objects, so memory stays near that text's size.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from annotation import UserError
from sim.world import Node, SceneGraph
from storage.guard import LIMITS, LimitError, check_size, inside, loads_json

FORMAT = "workbench-episode-bundle/1"
MANIFEST, STREAM = "episode.json", "stream.jsonl"
_INT_MAX = 2**63 - 1  # SQLite's integer range (storage.guard.check_int's): stored as given


class BundleFormatError(UserError, ValueError):
    """A bundle that cannot be imported; the message names the file, line and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


Text = Annotated[str, Field(max_length=LIMITS.text_chars)]
Name = Annotated[str, Field(min_length=1, max_length=LIMITS.text_chars)]
Tick = Annotated[int, Field(ge=0, le=_INT_MAX)]


class Video(_Strict):
    file: Name
    camera: Text
    offset_s: float = 0.0  # the video's first frame is at this many seconds of episode time


class Goal(_Strict):
    text: Text
    true_since: Tick | None = None  # the tick it became and stayed true; None: never


class Meta(_Strict):
    format: Literal["workbench-episode-bundle/1"]
    scenario: Name
    family: Name = "external"
    agent: Name
    tick_s: float = Field(gt=0)
    ticks: Tick
    status: Literal[
        "completed", "execution_blocked", "aborted", "budget_exhausted", "cancelled", "failed"
    ] = "completed"
    end_reason: Text | None = None  # why it ended as it did, in words
    success: bool | None = None
    seed: Annotated[int, Field(ge=-_INT_MAX - 1, le=_INT_MAX)] = 0
    goal: list[Goal] = Field(default_factory=list)
    videos: list[Video] = Field(default_factory=list)


class Obj(_Strict):
    id: Name
    type: Text = "object"
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    size: tuple[float, float, float] = (0.05, 0.05, 0.05)
    attrs: dict[str, Any] = Field(default_factory=dict)
    visible: bool = True


class State(_Strict):
    tick: Tick
    type: Literal["state", "belief"]
    objects: list[Obj]
    relations: list[tuple[Text, Text, Text]] = Field(default_factory=list)


class Act(_Strict):
    tick: Tick
    type: Literal["action"]
    text: Name
    source: Literal["agent", "user", "harness", "reference"] = "agent"
    end_tick: Tick | None = None
    outcome: Text = "ok"


class Rejected(_Strict):
    tick: Tick
    type: Literal["rejected"]
    text: Name
    reasons: list[Text] = Field(min_length=1)


class Say(_Strict):
    tick: Tick
    type: Literal["say"]
    speaker: Literal["user", "assistant"]
    text: Text
    flag: Text | None = None


class Ev(_Strict):
    tick: Tick
    type: Literal["event"]
    id: Name
    category: Literal["error", "question", "request", "plan_change"]
    what: Literal["trigger", "commit", "resolve"]
    kind: Text = ""
    resolution: Text | None = None


Line = Annotated[State | Act | Rejected | Say | Ev, Field(discriminator="type")]
_LINE: TypeAdapter[Line] = TypeAdapter(Line)


@dataclass
class Bundle:
    """A checked bundle: its manifest, the world and belief states as scene-graph text by
    tick, the other lines in tick order, and each video's resolved file."""

    root: Path
    meta: Meta
    states: list[tuple[int, str]]
    beliefs: list[tuple[int, str]]
    lines: list[Act | Rejected | Say | Ev]
    videos: list[tuple[Path, Video]] = field(default_factory=list)
    manifest_sha256: str = ""
    stream_sha256: str = ""

    def of(self, *kinds: str) -> Iterator[Any]:
        return (x for x in self.lines if x.type in kinds)


def _error(where: str, err: ValidationError) -> BundleFormatError:
    e = err.errors()[0]
    loc = ".".join(str(p) for p in e["loc"]) or "(line)"
    return BundleFormatError(f"{where}: {loc}: {e['msg']}")


def _member(root: Path, name: str) -> Path:
    """``root/name`` resolved inside ``root``, and a regular file."""
    path = inside(root, name, what="bundle file", source=str(root))
    if not path.is_file():
        raise BundleFormatError(f"{root / name}: missing (a bundle has {MANIFEST} and {STREAM})")
    return path


def read_bundle(root: Path) -> Bundle:
    """Read and check a bundle folder (see the module docstring)."""
    root = Path(root)
    meta_file, stream_file = root / MANIFEST, root / STREAM
    if not root.is_dir():
        raise BundleFormatError(f"{meta_file}: missing (a bundle is a folder with {MANIFEST} "
                                f"and {STREAM})")  # fmt: skip
    manifest, stream = _member(root, MANIFEST), _member(root, STREAM)
    check_size(manifest.stat().st_size, LIMITS.json_bytes, source=meta_file)
    raw = manifest.read_bytes()
    data = loads_json(raw, source=meta_file)
    for key, limit in (("videos", LIMITS.videos), ("goal", LIMITS.bundle_entries)):
        if isinstance(data, dict) and isinstance(data.get(key), list):  # counted before checked
            check_size(len(data[key]), limit, source=meta_file, field=key, unit="entries")
    try:
        meta = Meta.model_validate(data)
    except ValidationError as err:
        raise _error(str(meta_file), err) from None
    videos = []
    for k, v in enumerate(meta.videos):
        path = inside(root, v.file, what=f"videos.{k}.file", source=str(meta_file))
        if not path.is_file():
            raise BundleFormatError(f"{meta_file}: videos: {v.file} is not in the bundle")
        videos.append((path, v))
    bundle = Bundle(root, meta, [], [], [], videos, hashlib.sha256(raw).hexdigest())
    bundle.stream_sha256 = _read_stream(stream, stream_file, meta.ticks, bundle)
    return bundle


def _raw_lines(path: Path, shown: Path) -> Iterator[tuple[int, bytes]]:
    """``(number, bytes)`` of each non-blank line, each and all of them within their limits,
    read a bounded line at a time (the file is never in memory whole)."""
    limit = LIMITS.line_bytes
    check_size(path.stat().st_size, LIMITS.stream_bytes, source=shown)
    total, kept = 0, 0
    with path.open("rb") as f:
        for n in count(1):
            raw = f.readline(limit + 1)
            if not raw:
                return
            total += len(raw)  # the file may have grown since it was measured
            check_size(total, LIMITS.stream_bytes, source=shown)
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise LimitError(f"{shown}: line {n} is longer than {limit:,} bytes")
            kept += bool(raw.strip())
            if kept > LIMITS.stream_lines:
                raise _over(shown, n, f"more than {LIMITS.stream_lines:,} lines",
                            LIMITS.stream_lines)  # fmt: skip
            yield n, raw


def _over(shown: Path, n: int, what: str, limit: int) -> LimitError:
    return LimitError(f"{shown}: line {n}: {what}; the limit is {limit:,}")


def _read_stream(path: Path, shown: Path, ticks: int, into: Bundle) -> str:
    """Fill ``into`` from the stream; returns the stream's sha256."""
    digest, stored, rest = hashlib.sha256(), 0, []
    events: set[str] = set()
    for n, raw in _raw_lines(path, shown):
        digest.update(raw)
        if not raw.strip():
            continue
        line = _parse_line(raw, shown, n, ticks)
        if isinstance(line, State):
            text = graph_json(line)
            stored += len(text)  # with the defaults filled in: a terse stream grows 10×
            if stored > LIMITS.stream_bytes:
                raise _over(shown, n, f"the states come to {stored:,} bytes as the project "
                            "stores them", LIMITS.stream_bytes)  # fmt: skip
            (into.states if line.type == "state" else into.beliefs).append((line.tick, text))
            continue
        if isinstance(line, Ev) and line.id not in events:
            events.add(line.id)
            if len(events) > LIMITS.bundle_entries:
                raise _over(shown, n, f"id: event {len(events):,}", LIMITS.bundle_entries)
        rest.append(line)
    into.states.sort(key=lambda s: s[0])
    into.beliefs.sort(key=lambda s: s[0])
    into.lines = sorted(rest, key=lambda x: x.tick)
    if not into.states or into.states[0][0] != 0:
        raise BundleFormatError(f"{shown}: the world's state at tick 0 is missing (a line "
                                '{"tick": 0, "type": "state", …})')  # fmt: skip
    twice = [t for t, n in Counter(t for t, _ in into.states).items() if n > 1]
    if twice:
        raise BundleFormatError(f"{shown}: two states for one tick ({twice[0]})")
    return digest.hexdigest()


def _parse_line(raw: bytes, stream: Path, n: int, ticks: int) -> Line:
    where = f"{stream}: line {n}"
    try:
        obj = loads_json(raw, source=stream, field=f"line {n}", max_bytes=LIMITS.line_bytes)
    except LimitError:
        try:  # plain bad JSON keeps its short message; size, UTF-8 and depth stay limits
            json.loads(raw)
        except json.JSONDecodeError as err:
            raise BundleFormatError(f"{where}: not JSON: {err.msg}") from None
        except (ValueError, RecursionError):
            pass
        raise
    try:
        line = _LINE.validate_python(obj)
    except ValidationError as err:
        raise _error(where, err) from None
    if line.tick > ticks:
        raise BundleFormatError(f"{where}: tick: {line.tick} is past the episode's {ticks} ticks")
    return line


def graph_json(state: State) -> str:
    """A bundle state as the project's scene-graph JSON."""
    nodes = {o.id: Node(o.id, o.type, o.pos, o.size, attrs=dict(o.attrs), visible=o.visible)
             for o in state.objects}  # fmt: skip
    rels = frozenset((str(a), str(b), str(c)) for a, b, c in state.relations)
    graph = SceneGraph(state.tick, nodes, rels)
    return graph.to_json_text()
