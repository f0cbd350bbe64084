"""Episode bundles (``workbench-episode-bundle/1``): episodes recorded by any harness.

A bundle is a folder with ``episode.json`` (what ran) and ``stream.jsonl`` (what happened, one
JSON object per line, by tick), and optionally videos. docs/episode-bundle.md is the format.
:func:`read_bundle` validates every line and names the file, line and field of the first
problem; :func:`import_bundle` stores the episode in one transaction (all or nothing), so it
opens in the episode workspace like a recorded one. An imported episode has no scenario file
behind it: it is not replayed or forked, and says so.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from annotation import UserError
from sim.world import Node, SceneGraph
from storage import (
    ActionRecord,
    ActionSource,
    ConditionRecord,
    EventRecord,
    Project,
    TickRecord,
    TurnRecord,
)

FORMAT = "workbench-episode-bundle/1"


class BundleFormatError(UserError, ValueError):
    """A bundle that cannot be imported; the message names the file, line and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Video(_Strict):
    file: str
    camera: str
    offset_s: float = 0.0  # the video's first frame is at this many seconds of episode time


class Goal(_Strict):
    text: str
    true_since: int | None = None  # the tick it became and stayed true; None: never


class Meta(_Strict):
    format: Literal["workbench-episode-bundle/1"]
    scenario: str = Field(min_length=1)
    family: str = "external"
    agent: str = Field(min_length=1)
    tick_s: float = Field(gt=0)
    ticks: int = Field(ge=0)
    status: Literal[
        "completed", "execution_blocked", "aborted", "budget_exhausted", "cancelled", "failed"
    ] = "completed"
    end_reason: str | None = None  # why it ended as it did, in words
    success: bool | None = None
    seed: int = 0
    goal: list[Goal] = Field(default_factory=list)
    videos: list[Video] = Field(default_factory=list)


class Obj(_Strict):
    id: str = Field(min_length=1)
    type: str = "object"
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    size: tuple[float, float, float] = (0.05, 0.05, 0.05)
    attrs: dict[str, Any] = Field(default_factory=dict)
    visible: bool = True


class State(_Strict):
    tick: int = Field(ge=0)
    type: Literal["state", "belief"]
    objects: list[Obj]
    relations: list[tuple[str, str, str]] = Field(default_factory=list)


class Act(_Strict):
    tick: int = Field(ge=0)
    type: Literal["action"]
    text: str = Field(min_length=1)
    source: Literal["agent", "user", "harness", "reference"] = "agent"
    end_tick: int | None = None
    outcome: str = "ok"


class Rejected(_Strict):
    tick: int = Field(ge=0)
    type: Literal["rejected"]
    text: str = Field(min_length=1)
    reasons: list[str] = Field(min_length=1)


class Say(_Strict):
    tick: int = Field(ge=0)
    type: Literal["say"]
    speaker: Literal["user", "assistant"]
    text: str
    flag: str | None = None


class Ev(_Strict):
    tick: int = Field(ge=0)
    type: Literal["event"]
    id: str = Field(min_length=1)
    category: Literal["error", "question", "request", "plan_change"]
    what: Literal["trigger", "commit", "resolve"]
    kind: str = ""
    resolution: str | None = None


Line = Annotated[State | Act | Rejected | Say | Ev, Field(discriminator="type")]
_LINE: TypeAdapter[Line] = TypeAdapter(Line)


@dataclass
class Bundle:
    root: Path
    meta: Meta
    lines: list[Line]

    def of(self, *kinds: str) -> Iterator[Any]:
        return (x for x in self.lines if x.type in kinds)


def _error(where: str, err: ValidationError) -> BundleFormatError:
    e = err.errors()[0]
    field = ".".join(str(p) for p in e["loc"]) or "(line)"
    return BundleFormatError(f"{where}: {field}: {e['msg']}")


def read_bundle(root: Path) -> Bundle:
    """Read and check a bundle folder (see the module docstring)."""
    meta_path, stream = root / "episode.json", root / "stream.jsonl"
    for p in (meta_path, stream):
        if not p.is_file():
            raise BundleFormatError(f"{p}: missing (a bundle has episode.json and stream.jsonl)")
    try:
        meta = Meta.model_validate(json.loads(meta_path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as err:
        raise BundleFormatError(f"{meta_path}: line {err.lineno}: not JSON: {err.msg}") from None
    except ValidationError as err:
        raise _error(str(meta_path), err) from None
    for v in meta.videos:
        if not (root / v.file).is_file():
            raise BundleFormatError(f"{meta_path}: videos: {v.file} is not in the bundle")
    lines: list[Line] = []
    for n, text in enumerate(stream.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        where = f"{stream}: line {n}"
        try:
            line = _LINE.validate_python(json.loads(text))
        except json.JSONDecodeError as err:
            raise BundleFormatError(f"{where}: not JSON: {err.msg}") from None
        except ValidationError as err:
            raise _error(where, err) from None
        if line.tick > meta.ticks:
            raise BundleFormatError(f"{where}: tick: {line.tick} is past the episode's "
                                    f"{meta.ticks} ticks")  # fmt: skip
        lines.append(line)
    states = [x for x in lines if x.type == "state"]
    if not states or min(s.tick for s in states) != 0:
        raise BundleFormatError(f"{stream}: the world's state at tick 0 is missing (a line "
                                '{"tick": 0, "type": "state", …})')  # fmt: skip
    twice = [t for t, n in Counter(s.tick for s in states).items() if n > 1]
    if twice:
        raise BundleFormatError(f"{stream}: two states for one tick ({twice[0]})")
    return Bundle(root, meta, sorted(lines, key=lambda x: x.tick))


def graph_json(state: State) -> str:
    """A bundle state as the project's scene-graph JSON."""
    nodes = {o.id: Node(o.id, o.type, o.pos, o.size, attrs=dict(o.attrs), visible=o.visible)
             for o in state.objects}  # fmt: skip
    rels = frozenset((str(a), str(b), str(c)) for a, b, c in state.relations)
    graph = SceneGraph(state.tick, nodes, rels)
    return graph.to_json_text()


def import_bundle(project: Project, root: Path) -> str:
    """Store the bundle's episode (one transaction); returns its id."""
    b = read_bundle(root)
    m = b.meta
    states = list(b.of("state"))
    texts = [graph_json(s) for s in states]
    ticks = [TickRecord(s.tick, hashlib.sha256(t.encode()).hexdigest(), graph_json=t)
             for s, t in zip(states, texts, strict=True)]  # fmt: skip
    actions: list[ActionRecord] = []
    for x in b.of("action", "rejected"):
        accepted = x.type == "action"
        actions.append(ActionRecord(
            idx=len(actions), tick=x.tick,
            source=ActionSource(x.source if accepted else "agent"),
            text=x.text, action_json=json.dumps({"verb": "say", "text": x.text}),
            accepted=accepted,
            failed_json="[]" if accepted else json.dumps(
                [{"name": "rejected", "message": r} for r in x.reasons]),
            outcome=x.outcome if accepted else None,
            finished_tick=(x.end_tick if x.end_tick is not None else x.tick) if accepted else None,
        ))  # fmt: skip
    turns = [TurnRecord(k, x.tick, x.speaker, x.text, "say", x.flag)
             for k, x in enumerate(b.of("say"))]  # fmt: skip
    events = _events(list(b.of("event")))
    contract = json.dumps([g.text for g in m.goal])
    config = {"imported": True, "bundle": str(root), "videos": [v.model_dump() for v in m.videos]}
    with project.transaction():
        eid = project.episodes.create(
            scenario=m.scenario, scenario_sha=hashlib.sha256(m.scenario.encode()).hexdigest(),
            family=m.family, mode="symbolic", agent=m.agent, seed=m.seed, delta=m.tick_s,
            contract_json=contract, contract_hash=hashlib.sha256(contract.encode()).hexdigest(),
            config=config,
        )  # fmt: skip
        project.episodes.append(eid, ticks=ticks, actions=actions, turns=turns)
        project.episodes.set_events(eid, events)
        project.episodes.set_beliefs(eid, [(s.tick, graph_json(s)) for s in b.of("belief")])
        conditions = [ConditionRecord(k, json.dumps({"text": g.text}), g.text,
                                      "T" if g.true_since is not None else "F",
                                      g.true_since) for k, g in enumerate(m.goal)]  # fmt: skip
        metrics = {} if m.success is None else {"success": float(m.success)}
        project.episodes.finish(eid, status=m.status, ticks=m.ticks, t_ref=None,
                                conditions=conditions, metrics=metrics,
                                end_reason=m.end_reason)  # fmt: skip
        for v in m.videos:  # into media/ by sha256, in the same transaction
            _add_video(project, eid, root / v.file, v.camera)
    return eid


def _add_video(project: Project, episode_id: str, path: Path, camera: str) -> None:
    from storage.media import MediaError, index_video

    try:
        index = index_video(path)
    except MediaError as err:
        raise BundleFormatError(f"{path}: not a readable video ({err})") from None
    project.episodes.add_video(episode_id, path, camera=camera, fps=index.fps,
                               frames=index.frame_count)  # fmt: skip


def _events(lines: list[Ev]) -> list[EventRecord]:
    by_id: dict[str, dict[str, Any]] = {}
    for x in lines:
        e = by_id.setdefault(x.id, {"category": x.category, "kind": x.kind})
        e[x.what] = x.tick
        if x.resolution:
            e["resolution"] = x.resolution
    out = []
    for k, (eid, e) in enumerate(by_id.items()):
        out.append(EventRecord(
            idx=k, event_id=eid, category=e["category"], type=e["kind"],
            spec_json=json.dumps({"id": eid, "category": e["category"]}),
            status="resolved" if "resolve" in e else ("active" if "trigger" in e else "pending"),
            trigger_tick=e.get("trigger"), commit_tick=e.get("commit"),
            resolve_tick=e.get("resolve"), resolution=e.get("resolution"),
        ))  # fmt: skip
    return out
