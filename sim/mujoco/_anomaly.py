"""Injected faults (W2W anomalies) applied to the physics state.

``displace`` moves an object by an offset and stops it; ``flip`` turns it upside down about a
horizontal world axis through its centre, its lowest point kept where it was so it neither
starts inside its support nor drops onto it; ``remove`` parks it off the table (it leaves the
graph); ``drift`` makes it creep across the table at a constant velocity, applied once per tick
unless it is in the gripper.
"""

from __future__ import annotations

import mujoco  # type: ignore[import-untyped]
import numpy as np

from sim.mujoco._arm import subtree
from sim.mujoco._index import SceneIndex
from sim.mujoco._placing import park
from sim.mujoco._scene import geoms_box
from sim.mujoco._state import WorldState
from sim.world import ANOMALY_KINDS, Anomaly


def inject(scene: SceneIndex, data: mujoco.MjData, anomaly: Anomaly, state: WorldState) -> None:
    """Apply ``anomaly`` to ``data`` and ``state``; the caller re-runs mj_forward and perception."""
    if anomaly.kind not in ANOMALY_KINDS:
        raise ValueError(f"unknown anomaly {anomaly.kind!r} (kinds: {', '.join(ANOMALY_KINDS)})")
    i = scene.index(anomaly.obj)
    q, d = int(scene.free_qadr[i]), int(scene.free_dadr[i])
    if q < 0:
        raise ValueError(f"{anomaly.obj} is fixed furniture; it cannot be {anomaly.kind}d")
    if anomaly.kind == "displace":
        data.qpos[q : q + 3] += np.asarray(anomaly.offset, dtype=np.float64)
        data.qvel[d : d + 6] = 0.0
    elif anomaly.kind == "flip":
        if anomaly.axis not in ("x", "y"):
            raise ValueError(f"flip axis must be 'x' or 'y', got {anomaly.axis!r}")
        bodies = sorted(subtree(scene.model, int(scene.body[i])))
        bottom = _bottom(scene, data, bodies)
        turn = np.array([0.0, 1.0, 0.0, 0.0] if anomaly.axis == "x" else [0.0, 0.0, 1.0, 0.0])
        quat = np.zeros(4)
        mujoco.mju_mulQuat(quat, turn, data.qpos[q + 3 : q + 7].copy())
        data.qpos[q + 3 : q + 7] = quat
        data.qpos[q + 2] += max(0.0, bottom - _bottom(scene, data, bodies))
        data.qvel[d : d + 6] = 0.0
    elif anomaly.kind == "remove":
        park(scene, data, [anomaly.obj])
        state.parked.add(anomaly.obj)
        state.drifts.pop(anomaly.obj, None)
    else:  # drift
        vx, vy = anomaly.velocity
        if vx == 0.0 and vy == 0.0:
            state.drifts.pop(anomaly.obj, None)
        else:
            state.drifts[anomaly.obj] = (float(vx), float(vy))


def _bottom(scene: SceneIndex, data: mujoco.MjData, bodies: list[int]) -> float:
    mujoco.mj_kinematics(scene.model, data)
    return float(geoms_box(scene.model, data, bodies)[0][2])


def apply_drifts(
    scene: SceneIndex,
    data: mujoco.MjData,
    drifts: dict[str, tuple[float, float]],
    held: str | None,
    delta: float,
) -> None:
    """Move each drifting object by velocity·delta in the table plane (not while held)."""
    for obj, (vx, vy) in sorted(drifts.items()):
        if obj == held:
            continue
        q = int(scene.free_qadr[scene.index(obj)])
        data.qpos[q] += vx * delta
        data.qpos[q + 1] += vy * delta
