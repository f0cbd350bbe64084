"""What a physics world must remember besides MuJoCo's own state, and how it is saved.

A snapshot is MuJoCo's integration state (``mj_getState(mjSTATE_INTEGRATION)``: time,
positions, velocities, controls, warm start, ...) as hex, the controller's plain-data state, and
:class:`WorldState`. The state hash covers exactly the same, so "same hash" means "same future".
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import mujoco  # type: ignore[import-untyped]
import numpy as np

from sim.world import Attr, Verdict

SNAPSHOT_VERSION = 1
STATE = mujoco.mjtState.mjSTATE_INTEGRATION


@dataclass
class WorldState:
    """The world's own bookkeeping (mutable; copied in and out of snapshots)."""

    tick: int = 0
    extra: dict[str, dict[str, Attr]] = field(default_factory=dict)  # e.g. cooked levels
    drifts: dict[str, tuple[float, float]] = field(default_factory=dict)  # m/s in the plane
    parked: set[str] = field(default_factory=set)  # off the table, not in the graph
    picked_from: dict[str, tuple[float, float]] = field(default_factory=dict)
    verdict: Verdict | None = None  # the accepted action being carried out
    skill: str = ""  # controller skill running it ("" for wait)
    started: int = 0
    wait_left: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "tick": self.tick,
            "extra": {k: dict(sorted(v.items())) for k, v in sorted(self.extra.items())},
            "drifts": {k: list(v) for k, v in sorted(self.drifts.items())},
            "parked": sorted(self.parked),
            "picked_from": {k: list(v) for k, v in sorted(self.picked_from.items())},
            "verdict": None if self.verdict is None else self.verdict.to_json(),
            "skill": self.skill,
            "started": self.started,
            "wait_left": self.wait_left,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> WorldState:
        return WorldState(
            tick=int(d["tick"]),
            extra={k: dict(v) for k, v in d["extra"].items()},
            drifts={k: (float(v[0]), float(v[1])) for k, v in d["drifts"].items()},
            parked=set(d["parked"]),
            picked_from={k: (float(v[0]), float(v[1])) for k, v in d["picked_from"].items()},
            verdict=None if d["verdict"] is None else Verdict.from_json(d["verdict"]),
            skill=str(d["skill"]),
            started=int(d["started"]),
            wait_left=int(d["wait_left"]),
        )


def physics_bytes(model: mujoco.MjModel, data: mujoco.MjData) -> bytes:
    buf = np.empty(mujoco.mj_stateSize(model, STATE), dtype=np.float64)
    mujoco.mj_getState(model, data, buf, STATE)
    return buf.tobytes()


def to_snapshot(
    model: mujoco.MjModel, data: mujoco.MjData, controller: dict[str, Any], s: WorldState
) -> dict[str, Any]:
    return {
        "version": SNAPSHOT_VERSION,
        "mode": "physics",
        "physics": physics_bytes(model, data).hex(),
        "controller": json.loads(json.dumps(controller, default=_plain)),
        "world": s.to_json(),
    }


def from_snapshot(
    model: mujoco.MjModel, data: mujoco.MjData, snap: dict[str, Any]
) -> tuple[dict[str, Any], WorldState]:
    """Load the physics state into ``data``; returns the controller state and WorldState."""
    if snap.get("version") != SNAPSHOT_VERSION or snap.get("mode") != "physics":
        raise ValueError(
            f"not a physics snapshot of version {SNAPSHOT_VERSION} "
            f"(mode {snap.get('mode')!r}, version {snap.get('version')!r})"
        )
    buf = np.frombuffer(bytes.fromhex(snap["physics"]), dtype=np.float64)
    if buf.size != mujoco.mj_stateSize(model, STATE):
        raise ValueError("the snapshot's physics state does not fit this scene and arm")
    mujoco.mj_setState(model, data, buf.copy(), STATE)
    return dict(snap["controller"]), WorldState.from_json(snap["world"])


def digest(
    model: mujoco.MjModel, data: mujoco.MjData, controller: dict[str, Any], s: WorldState
) -> str:
    """sha256 over the world state as stable JSON plus the raw physics bytes; 16 hex digits."""
    h = hashlib.sha256()
    meta = {"controller": controller, "world": s.to_json()}
    h.update(json.dumps(meta, sort_keys=True, default=_plain).encode())
    h.update(physics_bytes(model, data))
    return h.hexdigest()[:16]


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, set | frozenset | tuple):
        return sorted(v) if isinstance(v, set | frozenset) else list(v)
    raise TypeError(f"cannot save {type(v).__name__} in a snapshot")
