"""Id tables for one compiled scene: which geom belongs to which object, joints, interiors.

Perception runs every tick, so everything that does not change during an episode (geom → object,
geom → gripper finger, the joint that opens a drawer, the site that bounds a container) is looked
up here once, as numpy arrays that the per-tick code can index without Python loops over geoms.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._annotations import Annotation
from sim.mujoco._arm import WB6, ArmBinding, ArmSpec, subtree
from sim.mujoco._gripper import measure_gripper
from sim.mujoco._scene import compiled, load_scene_info, scene_annotations, solid_geoms
from sim.world import SceneInfo

IntArray = NDArray[np.int64]

FINGER = -2  # geom_code of finger slot k is FINGER - k


@dataclass(frozen=True)
class Articulation:
    """An object's opening or switching joint: value ``lo`` means closed/off, ``hi`` open/on."""

    obj: int  # object index
    joint: int
    qadr: int
    dadr: int
    lo: float
    hi: float
    attr: str  # "open" (a fraction) or "on" (a bool)

    def fraction(self, q: float) -> float:
        return min(1.0, max(0.0, (q - self.lo) / (self.hi - self.lo)))

    def value(self, fraction: float) -> float:
        return self.lo + fraction * (self.hi - self.lo)


@dataclass(frozen=True)
class SceneIndex:
    """Everything per-tick code needs to know about a compiled scene + arm."""

    family: str
    model: mujoco.MjModel
    arm: ArmBinding
    info: SceneInfo
    notes: dict[str, Annotation]
    ids: tuple[str, ...]  # object ids, sorted; index i everywhere below
    body: IntArray  # body id per object
    free_qadr: IntArray  # qpos address of the free joint, -1 for fixed objects
    free_dadr: IntArray
    movable: IntArray  # indices of objects with a free joint (the ones that can be "in")
    loose: tuple[bool, ...]  # per object: has a free joint
    geom_code: IntArray  # per geom: object index, FINGER - slot for gripper fingers, else -1
    box_geoms: IntArray  # solid geoms of all objects, grouped by object
    box_starts: IntArray  # start of each object's group in box_geoms
    box_centre: NDArray[np.float64] | None  # their local box centres (None: all at the origin)
    box_half: NDArray[np.float64]  # their local box half sizes
    articulations: tuple[Articulation, ...]
    interiors: tuple[tuple[int, int, NDArray[np.float64]], ...]  # (object, site, half size)
    handles: dict[str, int]  # object id -> handle body
    hidden_when_shut: frozenset[int]  # openable containers: what is inside them is not visible
    static_on: frozenset[tuple[str, str, str]]  # fixed furniture standing on the table

    def index(self, obj: str) -> int:
        return self.ids.index(obj)

    def box_range(self, i: int) -> slice:
        """Where object ``i``'s solid geoms are in ``box_geoms`` (and its local boxes)."""
        stop = int(self.box_starts[i + 1]) if i + 1 < len(self.box_starts) else len(self.box_geoms)
        return slice(int(self.box_starts[i]), stop)

    def world_boxes(
        self, data: mujoco.MjData, part: slice = slice(None)
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """World-aligned (lo, hi) of the solid geoms ``box_geoms[part]`` in ``data``."""
        g = self.box_geoms[part]
        rot = data.geom_xmat.take(g, axis=0).reshape(-1, 3, 3)
        centre = data.geom_xpos.take(g, axis=0)
        if self.box_centre is not None:
            centre = centre + (rot @ self.box_centre[part, :, None])[:, :, 0]
        half = (np.abs(rot) @ self.box_half[part, :, None])[:, :, 0]
        return centre - half, centre + half


@functools.cache
def scene_index(family: str, arm: ArmSpec = WB6) -> SceneIndex:
    """The index of ``family`` composed with ``arm`` (cached, like the compiled model)."""
    model, binding = compiled(family, arm)
    return build_index(
        family, model, binding, scene_annotations(family, arm), load_scene_info(family, arm)
    )


def build_index(
    family: str,
    model: mujoco.MjModel,
    arm: ArmBinding,
    notes: dict[str, Annotation],
    info: SceneInfo,
) -> SceneIndex:
    ids = tuple(sorted(notes))
    name2id = mujoco.mj_name2id
    obj_t = mujoco.mjtObj
    body = np.array([name2id(model, obj_t.mjOBJ_BODY, i) for i in ids], dtype=np.int64)
    free_q = np.full(len(ids), -1, dtype=np.int64)
    free_d = np.full(len(ids), -1, dtype=np.int64)
    geom_obj = np.full(model.ngeom, -1, dtype=np.int64)
    groups: list[list[int]] = []
    for i, b in enumerate(body):
        own = subtree(model, int(b))
        for j in range(int(model.body_jntadr[b]), int(model.body_jntadr[b] + model.body_jntnum[b])):
            if int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_FREE:
                free_q[i], free_d[i] = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
        for g in range(model.ngeom):
            if int(model.geom_bodyid[g]) in own:
                geom_obj[g] = i
        groups.append(solid_geoms(model, sorted(own)))
    starts = np.cumsum([0] + [len(g) for g in groups[:-1]]).astype(np.int64)

    geom_code = geom_obj.copy()
    for slot, bodies in enumerate(_finger_slots(model, arm)):
        geom_code[np.isin(model.geom_bodyid, sorted(bodies))] = FINGER - slot
    box_geoms = np.array([g for grp in groups for g in grp], dtype=np.int64)
    aabb = model.geom_aabb[box_geoms]

    arts, interiors, handles, shut = [], [], {}, set()
    for i, oid in enumerate(ids):
        note = notes[oid]
        if note.joint is not None and note.span is not None:
            j = name2id(model, obj_t.mjOBJ_JOINT, note.joint)
            attr = "open" if "openable" in note.tags else "on"
            arts.append(
                Articulation(
                    i, j, int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j]), *note.span, attr
                )
            )
        if note.interior is not None:
            s = name2id(model, obj_t.mjOBJ_SITE, note.interior)
            interiors.append((i, s, model.site_size[s].copy()))
            if "openable" in note.tags:
                shut.add(i)
        if note.handle is not None:
            handles[oid] = name2id(model, obj_t.mjOBJ_BODY, note.handle)
    return SceneIndex(
        family=family,
        model=model,
        arm=arm,
        info=info,
        notes=notes,
        ids=ids,
        body=body,
        free_qadr=free_q,
        free_dadr=free_d,
        movable=np.flatnonzero(free_q >= 0).astype(np.int64),
        loose=tuple(bool(q >= 0) for q in free_q),
        geom_code=geom_code,
        box_geoms=box_geoms,
        box_starts=starts,
        box_centre=aabb[:, :3].copy() if np.any(aabb[:, :3]) else None,
        box_half=aabb[:, 3:].copy(),
        articulations=tuple(arts),
        interiors=tuple(interiors),
        handles=handles,
        hidden_when_shut=frozenset(shut),
        static_on=_standing(info),
    )


def _standing(info: SceneInfo) -> frozenset[tuple[str, str, str]]:
    """``on(x, table)`` for fixed furniture whose bottom is at the table top.

    MuJoCo makes no contacts between two bodies welded to the world, so for furniture this
    relation comes from geometry (once: it never moves), as the symbolic mode derives it.
    """
    table = info.objects[info.table]
    out = set()
    for o in info.objects.values():
        if o.id == info.table or "fixed" not in o.tags:
            continue
        over = abs(o.pos[0] - table.pos[0]) <= table.half[0]
        over &= abs(o.pos[1] - table.pos[1]) <= table.half[1]
        if over and abs(o.pos[2] - o.half[2] - info.table_top) < 0.02:
            out.add(("on", o.id, info.table))
    return frozenset(out)


def _finger_slots(model: mujoco.MjModel, arm: ArmBinding) -> list[frozenset[int]]:
    """The bodies of each jaw's colliding finger geoms, as the gripper was measured; else
    every hand body on its own.

    "Held" means touched by two distinct fingers, so a palm brushing an object does not count.
    One slot per jaw (not per actuated body) finds pads that hang on an unactuated linkage, and
    a jaw built of two bodies still counts once.
    """
    grip = measure_gripper(model, arm)
    jaws = [frozenset(int(model.geom_bodyid[g]) for g in side) for side in grip.finger_geoms]
    if all(jaws) and len(jaws) >= 2:
        return jaws
    return [frozenset({b}) for b in sorted(arm.gripper_body_ids)]


MAX_CONTACTS = 32


def contact_points(scene: SceneIndex, data: mujoco.MjData) -> list[list[int]]:
    """Where objects touch anything (another object, a finger, the table), in whole
    millimetres, one point per 5 mm cell (a box resting on a face makes four), at most
    :data:`MAX_CONTACTS`: what the episode view draws as contacts."""
    if not data.ncon:
        return []
    con = data.contact
    codes = scene.geom_code.take(con.geom)
    touching = (codes >= 0).any(axis=1)
    out: dict[tuple[int, int, int], list[int]] = {}
    for p in np.asarray(con.pos)[touching]:
        mm = [round(float(v) * 1000) for v in p]
        out.setdefault((mm[0] // 5, mm[1] // 5, mm[2] // 5), mm)
        if len(out) >= MAX_CONTACTS:
            break
    return list(out.values())
