"""The scene graph from physics: contacts and geometry only, every tick.

Nothing an agent says or a controller intends enters the graph; it is read off MuJoCo's state:

- ``on(a, b)``: a contact between a and b whose normal is mostly vertical, with a's centre above
  the contact point (a rests on b).
- ``in(a, b)``: a's centre lies inside b's interior box (the container's ``interior`` site, in
  the world frame, so a drawer's interior travels with the drawer).
- ``held(a, gripper)``: a touches at least two distinct gripper fingers.
- ``open(x)``: x's open fraction (from its joint) is at least ``OPEN_AT``.

Attributes: ``open`` (fraction) and ``on`` (bool) from the articulated joints, ``upside_down``
when a loose object's up axis points down, plus what the world carries (``cooked``). Objects in
a shut openable container are not visible.

It runs every tick, so it is written against numpy views of ``data.contact`` and the id tables of
:class:`~sim.mujoco._index.SceneIndex`; ~140 µs for the kitchen on a slow 2-core VM.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import mujoco  # type: ignore[import-untyped]
import numpy as np

from sim.mujoco._index import FINGER, SceneIndex
from sim.world import GRIPPER, OPEN_AT, Attr, Node, Relation, SceneGraph

UPSIDE_DOWN = -0.5  # body z axis · world z below this: the object lies upside down
VERTICAL = 0.7  # |normal z| above this is a support contact (within ~45° of vertical)

_NO_ATTRS: Mapping[str, Mapping[str, Attr]] = {}


def perceive(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    scene: SceneIndex,
    tick: int,
    extra_attrs: Mapping[str, Mapping[str, Attr]] = _NO_ATTRS,
    *,
    absent: frozenset[str] = frozenset(),
) -> SceneGraph:
    """The graph of ``data`` (after ``mj_forward``/``mj_step``); ``absent`` objects are left out.

    ``extra_attrs`` carries what physics does not model (a patty's ``cooked`` level): they are
    merged over the annotation defaults and under the physics-derived attributes.
    """
    ids = scene.ids
    pos = data.xpos.take(scene.body, axis=0)
    rels: set[Relation] = set(scene.static_on)

    # object boxes: world AABB of each object's solid geoms
    geom_lo, geom_hi = scene.world_boxes(data)
    lo = np.minimum.reduceat(geom_lo, scene.box_starts, axis=0)
    hi = np.maximum.reduceat(geom_hi, scene.box_starts, axis=0)
    size = (hi - lo) * 0.5

    # contacts: supports and grasps. A plain loop over the contact list beats a dozen numpy
    # passes over it at the sizes we have (tens of contacts).
    if data.ncon:
        con = data.contact
        codes = scene.geom_code.take(con.geom).tolist()
        zs = pos[:, 2].tolist()
        pairs: set[tuple[int, int]] = set()
        touched: dict[int, set[int]] = {}
        for (a, b), nz, cz in zip(
            codes, con.frame[:, 2].tolist(), con.pos[:, 2].tolist(), strict=True
        ):
            if a >= 0 and b >= 0:
                if a != b and (nz > VERTICAL or nz < -VERTICAL):
                    if nz < 0:  # the normal points from geom 1 to geom 2: make b the upper one
                        a, b = b, a
                    if zs[b] > cz:
                        pairs.add((b, a))
            elif a <= FINGER and b >= 0:
                touched.setdefault(b, set()).add(a)
            elif b <= FINGER and a >= 0:
                touched.setdefault(a, set()).add(b)
        for upper, lower in pairs:
            rels.add(("on", ids[upper], ids[lower]))
        for o, fingers in touched.items():
            if len(fingers) >= 2:
                rels.add(("held", ids[o], GRIPPER))

    # containment: centres of loose objects inside interior boxes (world frame)
    inside: dict[int, list[int]] = {}
    if scene.interiors:
        loose = scene.movable
        centres = pos.take(loose, axis=0)
        for c, site, box in scene.interiors:
            local = (centres - data.site_xpos[site]) @ data.site_xmat[site].reshape(3, 3)
            for a in loose[(np.abs(local) <= box).all(axis=1)].tolist():
                if a == c:  # a movable container's own centre lies in its interior
                    continue
                rels.add(("in", ids[a], ids[c]))
                inside.setdefault(a, []).append(c)

    # articulated state
    derived: dict[int, dict[str, Attr]] = {}
    open_now: set[int] = set()
    qpos = data.qpos
    for art in scene.articulations:
        frac = art.fraction(float(qpos[art.qadr]))
        if art.attr == "open":
            derived.setdefault(art.obj, {})["open"] = round(frac, 4)
            if frac >= OPEN_AT:
                open_now.add(art.obj)
                rels.add(("open", ids[art.obj], ""))
        else:
            derived.setdefault(art.obj, {})["on"] = frac >= 0.5

    if absent:
        rels = {r for r in rels if r[1] not in absent and r[2] not in absent}
    quat = data.xquat.take(scene.body, axis=0)
    pos_l, size_l, quat_l = pos.tolist(), size.tolist(), quat.tolist()
    nodes: dict[str, Node] = {}
    notes = scene.notes
    loose_obj = scene.loose
    for i, oid in enumerate(ids):
        if oid in absent:
            continue
        note = notes[oid]
        attrs: dict[str, Attr] = dict(note.attrs)
        extra = extra_attrs.get(oid)
        if extra:
            attrs.update(extra)
        own = derived.get(i)
        if own:
            attrs.update(own)
        w, x, y, z = quat_l[i]
        if loose_obj[i] and 1.0 - 2.0 * (x * x + y * y) < UPSIDE_DOWN:
            attrs["upside_down"] = True  # the body's up axis points down (a flipped object)
        hidden = i in inside and any(
            c in scene.hidden_when_shut and c not in open_now for c in inside[i]
        )
        nodes[oid] = Node(
            id=oid,
            type=note.type,
            pos=(pos_l[i][0], pos_l[i][1], pos_l[i][2]),
            size=(size_l[i][0], size_l[i][1], size_l[i][2]),
            yaw=math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)),
            color=note.color,
            tags=note.tags,
            attrs=attrs,
            visible=not hidden,
        )
    return SceneGraph(
        tick=tick, nodes=nodes, relations=frozenset(rels), workspace=scene.info.workspace
    )
