"""Demonstrations in a project: an episode (agent ``teleop``) plus its arrays as a file.

A demonstration is stored as a physics episode so everything that lists, opens, rates and
reviews episodes sees it: one ``sim_ticks`` row per step (the sha256 of the step's MuJoCo
state as its hash, the full scene graph, the end-effector and the action applied for the
timeline), the contract's values at the end as its conditions, the arrays in an ``.npz``
artifact (kind ``demo``, in ``media/`` by sha256, so they are never altered) and each camera as
an MP4 (``add_video``) for viewing; the npz keeps the frames too, since an MP4 is lossy and a
demonstration must load back exactly. Spans and the rest of the metadata live in the
episode's config. No new table: episodes and artifacts already say all of it.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import tempfile
from pathlib import Path
from typing import Any, cast

import numpy as np

from sim.contracts import Truth, evaluate
from sim.episode import open_scenario
from sim.synthetic import Mp4Writer
from sim.teleop._demo import Demonstration, Span
from sim.world import SceneGraph
from sim.world import diff as graph_diff
from storage import ConditionRecord, EpisodeError, EpisodeRecord, Project, TickRecord

AGENT = "teleop"
KIND = "demo"
_ARRAYS = ("timestamps", "joint_pos", "joint_vel", "gripper", "ee_pos", "ee_quat", "actions",
           "states")  # fmt: skip


def state_hash(state: np.ndarray) -> str:
    """The tick hash of a demonstration step: sha256 of its float64 MuJoCo state."""
    return hashlib.sha256(np.ascontiguousarray(state, dtype=np.float64).tobytes()).hexdigest()


def store_demonstration(project: Project, demo: Demonstration) -> str:
    """Store ``demo`` (see the module docstring); returns the episode id."""
    demo.check()
    meta = dict(demo.meta)
    bound = open_scenario(str(meta.get("source", demo.scenario)))
    if "scenario_sha" in meta and meta["scenario_sha"] != bound.scenario.digest:
        raise EpisodeError(
            f"{demo.name}: its scenario {bound.source} changed since it was recorded"
        )
    config: dict[str, Any] = {
        "source": bound.source, "arm": demo.arm, "teleop": True, "name": demo.name,
        "task": demo.task, "fps": demo.fps, "joint_names": list(demo.joint_names),
        "success": demo.success, "cameras": sorted(demo.frames),
        "spans": [_span_json(s) for s in demo.spans], "meta": meta,
    }  # fmt: skip
    if "arm_digest" in meta:
        config["arm_digest"] = meta["arm_digest"]
    eps = project.episodes
    eid = eps.create(
        scenario=bound.name, scenario_sha=bound.scenario.digest, family=bound.scenario.family,
        mode="physics", agent=AGENT, seed=int(meta.get("seed", bound.scenario.seed)),
        delta=1.0 / demo.fps, contract_json=bound.contract.canonical_json,
        contract_hash=bound.contract.digest, config=config,
    )  # fmt: skip
    graphs = [SceneGraph.from_json(json.loads(g)) for g in demo.graphs]
    # what changed from the step before, as any episode stores it: the inspector's diff and
    # the contract's spans on the timeline read it
    diffs = ["{}"] + [json.dumps(graph_diff(a, b).to_json(), sort_keys=True)
                      for a, b in itertools.pairwise(graphs)]  # fmt: skip
    ticks = [
        TickRecord(
            tick=i,
            state_hash=state_hash(demo.states[i]),
            diff_json=diffs[i] if graphs else "{}",
            controller_json=json.dumps(
                {
                    "skill": AGENT,
                    "busy": False,
                    "ee": [round(float(v) * 1000) for v in demo.ee_pos[i]],
                    "action": [float(v) for v in demo.actions[i]],
                }
            ),
            graph_json=demo.graphs[i] if demo.graphs else None,
        )
        for i in range(demo.steps)
    ]
    eps.append(eid, ticks=ticks)
    with tempfile.TemporaryDirectory(prefix="wb-demo-") as tmp:
        npz = Path(tmp) / f"{demo.name}.npz"
        arrays: dict[str, Any] = {k: getattr(demo, k) for k in _ARRAYS}
        arrays["model_xml"] = np.array(demo.model_xml)
        for cam, frames in demo.frames.items():
            arrays[f"frames/{cam}"] = frames
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        npz.write_bytes(buf.getvalue())
        eps.add_file(eid, npz, kind=KIND, frames=demo.steps)
        for cam, frames in sorted(demo.frames.items()):
            mp4 = Path(tmp) / f"{cam}.mp4"
            writer = Mp4Writer(mp4, max(1, round(demo.fps)))
            for frame in frames:
                writer.write(frame)
            writer.close()
            eps.add_video(eid, mp4, camera=cam, fps=float(max(1, round(demo.fps))),
                          frames=writer.count)  # fmt: skip
    conditions = _conditions(bound, demo)
    eps.finish(eid, status="completed", ticks=demo.steps - 1, t_ref=None, conditions=conditions)
    return eid


def _conditions(bound: Any, demo: Demonstration) -> list[ConditionRecord]:
    """The contract's values at the end: as the recorder found them on the world after the
    last step (``meta["conditions"]``), else on the last recorded graph."""
    preds = bound.contract.predicates
    values = demo.meta.get("conditions")
    if not (isinstance(values, list) and len(values) == len(preds)):
        if not demo.graphs:
            return []
        last = SceneGraph.from_json(json.loads(demo.graphs[-1]))
        values = [c.value.value for c in evaluate(bound.contract, last, []).conditions]
    return [
        ConditionRecord(
            i, json.dumps(p.to_json(), sort_keys=True), p.describe(), cast(Any, Truth(v).value)
        )
        for i, (p, v) in enumerate(zip(preds, values, strict=True))
    ]


def list_demonstrations(project: Project, scenario: str | None = None) -> list[EpisodeRecord]:
    """The stored demonstrations (episodes recorded by teleoperation), newest first."""
    return [ep for ep in project.episodes.list(scenario) if _is_demo(ep)]


def load_demonstration(project: Project, episode_id: str) -> Demonstration:
    """A stored demonstration, exactly as it was stored."""
    ep = project.episodes.get(episode_id)
    if not _is_demo(ep):
        raise EpisodeError(f"episode {ep.id[:8]} is not a demonstration (agent {ep.agent!r})")
    art = next((a for a in project.episodes.artifacts(ep.id) if a.kind == KIND), None)
    if art is None:
        raise EpisodeError(f"episode {ep.id[:8]}: its demonstration arrays are missing")
    with np.load(project.media_path(art.media_sha), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    graphs = tuple(t.graph_json or "" for t in project.episodes.ticks(ep.id))
    c = ep.config
    demo = Demonstration(
        name=str(c["name"]), scenario=ep.scenario, task=str(c["task"]), arm=str(c["arm"]),
        fps=float(c["fps"]), joint_names=tuple(c["joint_names"]),
        model_xml=str(arrays.pop("model_xml")), success=bool(c["success"]),
        frames={k.removeprefix("frames/"): v for k, v in arrays.items()
                if k.startswith("frames/")},
        graphs=graphs if all(graphs) else (),
        spans=tuple(Span(**s) for s in c.get("spans", [])),
        meta=dict(c.get("meta", {})),
        **{k: arrays[k] for k in _ARRAYS},
    )  # fmt: skip
    demo.check()
    return demo


def _is_demo(ep: EpisodeRecord) -> bool:
    return ep.agent == AGENT and bool(ep.config.get("teleop"))


def _span_json(s: Span) -> dict[str, Any]:
    return {"start": s.start, "end": s.end, "who": s.who, "why": s.why, "kind": s.kind}
