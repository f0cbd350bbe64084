"""Any stored episode as an episode bundle (``workbench-episode-bundle/1``): the project's own
portable format, the inverse of :func:`import_bundle`.

The world goes out as a ``state`` line at tick 0 and at every tick its scene graph changed,
the agent's stated beliefs as ``belief`` lines, actions and refusals, what the user and the
assistant said, and event marks; the goal conditions with the tick each became and stayed true;
the episode's videos as files. A bundle written here imports back (into this project or
another) with the same timeline. What a bundle has no line for (MuJoCo states, exchanges) stays
in the project.

A camera's name is data (an imported bundle may call one ``../../elsewhere/pwned``), so it
becomes a file name only through :func:`storage.guard.safe_name`, two cameras whose safe names
meet get ``-2``, ``-3`` (compared case-blind, for the file systems that are), and every file is
written at a path :func:`storage.guard.inside` confirmed is in the bundle folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sim.episode import refuse_running
from sim.review._bundle import BundleFormatError
from sim.review._timeline import load_timeline
from sim.world import SceneGraph
from storage import ArtifactRecord, Project
from storage.guard import inside, safe_name

FORMAT = "workbench-episode-bundle/1"
STATUSES = (
    "completed", "execution_blocked", "aborted", "budget_exhausted", "cancelled", "failed",
)  # fmt: skip


def _state(tick: int, kind: str, graph: SceneGraph) -> dict[str, Any]:
    objects = [
        {"id": n.id, "type": n.type, "pos": list(n.pos), "size": list(n.size),
         "attrs": dict(n.attrs), "visible": n.visible}
        for n in sorted(graph.nodes.values(), key=lambda n: n.id)
    ]  # fmt: skip
    return {"tick": tick, "type": kind, "objects": objects,
            "relations": [list(r) for r in sorted(graph.relations)]}  # fmt: skip


def export_bundle(project: Project, episode_id: str, out: Path) -> Path:
    """Write the episode as a bundle folder at ``out`` (which must not exist); returns it."""
    out = Path(out)
    if out.exists():
        raise BundleFormatError(f"{out}: already exists; give a new folder for the bundle")
    refuse_running(project.episodes.get(episode_id), "export it as a bundle")
    tl = load_timeline(project, episode_id, with_parent=False)
    ep, eps = tl.episode, project.episodes
    lines: list[dict[str, Any]] = []
    last = None
    for i, row in enumerate(tl.graphs.rows):
        text = tl.graphs.graph_at(row.tick).to_json_text()
        if i == 0 or text != last:
            lines.append(_state(row.tick, "state", tl.graphs.graph_at(row.tick)))
            last = text
    lines += [_state(t, "belief", g) for t, g in tl.beliefs]
    for a in tl.actions:
        if a.accepted:
            source = a.source.value if hasattr(a.source, "value") else str(a.source)
            lines.append({"tick": a.tick, "type": "action", "text": a.text,
                          "source": source if source in ("agent", "user", "harness",
                                                         "reference") else "agent",
                          "end_tick": a.finished_tick, "outcome": a.outcome or "ok"})  # fmt: skip
        else:
            reasons = [f["message"] for f in json.loads(a.failed_json)] or ["refused"]
            lines.append({"tick": a.tick, "type": "rejected", "text": a.text, "reasons": reasons})
    for t in tl.turns:
        if t.speaker in ("user", "assistant") and (t.text or t.flag):
            lines.append({"tick": t.tick, "type": "say", "speaker": t.speaker,
                          "text": t.text, "flag": t.flag})  # fmt: skip
    for e in tl.events:
        for what, tick in (("trigger", e.trigger_tick), ("commit", e.commit_tick),
                           ("resolve", e.resolve_tick)):  # fmt: skip
            if tick is not None:
                how = str(e.resolution) if what == "resolve" and e.resolution else None
                lines.append({"tick": tick, "type": "event", "id": e.event_id,
                              "category": str(e.category), "what": what, "kind": e.type or "",
                              "resolution": how})  # fmt: skip
    lines.sort(key=lambda x: (x["tick"], x["type"] != "state"))
    end = tl.ticks
    goal = [{"text": text, "true_since": since if holds else None}
            for text, holds, since in tl.contract_at(end)]  # fmt: skip
    success = eps.metrics(ep.id).get("success")
    if success is None and "success" in ep.config:
        success = float(bool(ep.config["success"]))
    offsets = {str(v.get("camera")): float(v.get("offset_s", 0.0))
               for v in ep.config.get("videos", []) if isinstance(v, dict)}  # fmt: skip
    videos = [a for a in eps.artifacts(ep.id) if a.kind == "video"]
    files = _file_names(project, videos)
    meta = {
        "format": FORMAT, "scenario": ep.scenario, "family": ep.family, "agent": ep.agent,
        "tick_s": ep.delta, "ticks": ep.ticks,
        "status": ep.status.value if ep.status.value in STATUSES else "aborted",
        "end_reason": ep.end_reason,
        "success": None if success is None else bool(success == 1.0), "seed": ep.seed,
        "goal": goal,
        "videos": [{"file": name, "camera": v.camera, "offset_s": offsets.get(v.camera, 0.0)}
                   for v, name in zip(videos, files, strict=True)],
    }  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "episode.json").write_text(json.dumps(meta, indent=2), "utf-8")
        (tmp / "stream.jsonl").write_text(
            "".join(json.dumps(x, sort_keys=True) + "\n" for x in lines), "utf-8"
        )
        for v, name in zip(videos, files, strict=True):
            dest = inside(tmp, name, what="video file", source=f"camera {v.camera!r}")
            shutil.copyfile(project.media_path(v.media_sha), dest)
        os.replace(tmp, out)  # the bundle appears whole, or not at all
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _file_names(project: Project, videos: Sequence[ArtifactRecord]) -> list[str]:
    """One file name per video, from its camera's safe name and its stored file's suffix;
    distinct even where two cameras' safe names are the same."""
    names: list[str] = []
    taken = {"episode.json", "stream.jsonl"}  # a camera never writes over the bundle's own
    for v in videos:
        suffix = project.media_path(v.media_sha).suffix.lower()
        suffix = suffix if re.fullmatch(r"\.[a-z0-9]{1,8}", suffix) else ".mp4"
        stem = safe_name(v.camera, fallback="camera")
        name, n = stem + suffix, 1
        while name.casefold() in taken:
            n += 1
            name = f"{stem}-{n}{suffix}"
        taken.add(name.casefold())
        names.append(name)
    return names
