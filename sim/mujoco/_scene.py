"""Scene families on disk and the :class:`SceneInfo` both world modes read from them.

A scene file is plain MJCF plus ``object:ID`` annotations (see :mod:`sim.mujoco._annotations`).
This module checks every annotation against the compiled model (does the body, joint, site,
handle exist, and does ``fixed`` agree with the body having no free joint?) and measures what the
layout sampler and the symbolic mode need: each object's box, its default position and the
interior of containers. Scenes are compiled with the arm attached, once per (family, arm), so the
physics world and the SceneInfo come from the very same model.
"""

from __future__ import annotations

import functools
from importlib.resources import files
from pathlib import Path

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._annotations import PREFIX, Annotation, SceneError, parse_annotation
from sim.mujoco._arm import WB6, ArmBinding, ArmSpec, subtree
from sim.mujoco._compose import compose
from sim.world import ObjectInfo, SceneInfo

FAMILIES = ("kitchen", "tidy", "stack")
CAMERAS = ("head", "wrist", "top", "front")

_SCENES = Path(str(files("resources"))) / "sim" / "scenes"
_obj = mujoco.mjtObj


def scene_path(family: str) -> Path:
    """The MJCF file of a scene family; unknown families are a :class:`SceneError`."""
    if family not in FAMILIES:
        raise SceneError(f"unknown scene family {family!r} (families: {', '.join(FAMILIES)})")
    return _SCENES / f"{family}.xml"


@functools.cache
def compiled(family: str, arm: ArmSpec = WB6) -> tuple[mujoco.MjModel, ArmBinding]:
    """The scene with the arm attached at ``arm_mount`` (cached: compiling takes tens of ms).

    Callers must not modify the returned model; a world that needs to (colours) copies it.
    """
    try:
        return compose(scene_path(family), arm)
    except ValueError as exc:
        raise SceneError(str(exc)) from exc


@functools.cache
def scene_annotations(family: str, arm: ArmSpec = WB6) -> dict[str, Annotation]:
    """The checked ``object:ID`` annotations of a family's compiled model (cached).

    Callers must not modify the returned dict.
    """
    model, _ = compiled(family, arm)
    return read_annotations(model, scene_path(family).name)


@functools.cache
def load_scene_info(family: str, arm: ArmSpec = WB6) -> SceneInfo:
    """What the layout sampler and the symbolic mode know about a family (cached)."""
    model, _ = compiled(family, arm)
    return scene_info(model, scene_annotations(family, arm), family, scene_path(family).name)


def read_scene(path: Path) -> tuple[mujoco.MjModel, dict[str, Annotation], SceneInfo]:
    """Compile one scene file alone and read its objects; every problem names the file."""
    try:
        model = mujoco.MjSpec.from_file(str(path)).compile()
    except (ValueError, RuntimeError) as exc:
        raise SceneError(f"{path.name}: {str(exc).strip()}") from exc
    notes = read_annotations(model, path.name)
    return model, notes, scene_info(model, notes, path.stem, path.name)


def read_annotations(model: mujoco.MjModel, file: str) -> dict[str, Annotation]:
    """Parse and check every ``object:ID`` text of ``model``; raise :class:`SceneError`."""
    notes: dict[str, Annotation] = {}
    for t in range(model.ntext):
        name = mujoco.mj_id2name(model, _obj.mjOBJ_TEXT, t) or ""
        if not name.startswith(PREFIX):
            continue
        adr, size = int(model.text_adr[t]), int(model.text_size[t])
        data = bytes(model.text_data[adr : adr + size]).rstrip(b"\0").decode()
        note = parse_annotation(name[len(PREFIX) :], data, file=file)
        _check_against_model(model, note, file)
        notes[note.id] = note
    for b in range(1, model.nbody):
        body = mujoco.mj_id2name(model, _obj.mjOBJ_BODY, b) or ""
        if _free_joint(model, b) >= 0 and int(model.body_parentid[b]) == 0 and body not in notes:
            raise SceneError(f"{file}: body {body!r} moves freely but has no object:{body} text")
    tables = [n.id for n in notes.values() if n.type == "table"]
    if len(tables) != 1:
        raise SceneError(f"{file}: expected exactly one object of type=table, got {tables}")
    return notes


def scene_info(
    model: mujoco.MjModel, notes: dict[str, Annotation], family: str, file: str
) -> SceneInfo:
    """Measure objects at the model's default pose and read the declared workspace."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    objects: dict[str, ObjectInfo] = {}
    for oid, note in sorted(notes.items()):
        b = _body(model, oid)
        rot = data.xmat[b].reshape(3, 3)
        lo, hi = geoms_box(model, data, sorted(subtree(model, b)))
        half = np.abs(rot.T) @ ((hi - lo) / 2)  # bodies are authored centred on their box
        interior = None
        if note.interior is not None:
            s = _site(model, note.interior)
            c = rot.T @ (data.site_xpos[s] - data.xpos[b])
            interior = (_vec(c), _vec(model.site_size[s]))
        objects[oid] = ObjectInfo(
            id=oid,
            type=note.type,
            half=_vec(half),
            pos=_vec(data.xpos[b]),
            color=note.color,
            tags=note.tags,
            attrs=dict(note.attrs),
            interior=interior,
        )
    table = next(n.id for n in notes.values() if n.type == "table")
    table_top = float(geoms_box(model, data, sorted(subtree(model, _body(model, table))))[1][2])
    ws = mujoco.mj_name2id(model, _obj.mjOBJ_NUMERIC, "workspace")
    if ws < 0 or int(model.numeric_size[ws]) != 4:
        raise SceneError(f"{file}: needs <numeric name='workspace' data='xmin xmax ymin ymax'/>")
    adr = int(model.numeric_adr[ws])
    w = [float(v) for v in model.numeric_data[adr : adr + 4]]
    return SceneInfo(
        family=family,
        objects=objects,
        table=table,
        table_top=table_top,
        workspace=(w[0], w[1], w[2], w[3]),
        cameras=CAMERAS,
    )


def solid_geoms(model: mujoco.MjModel, bodies: list[int]) -> list[int]:
    """Geoms of ``bodies`` that take part in contacts (visual-only geoms are left out)."""
    want = set(bodies)
    return [
        g
        for g in range(model.ngeom)
        if int(model.geom_bodyid[g]) in want
        and (int(model.geom_contype[g]) or int(model.geom_conaffinity[g]))
    ]


def geoms_box(
    model: mujoco.MjModel, data: mujoco.MjData, bodies: list[int]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """World-aligned (min, max) corners of the solid geoms of ``bodies`` in ``data``."""
    gs = solid_geoms(model, bodies)
    if not gs:
        p = data.xpos[bodies[0]]
        return p.copy(), p.copy()
    rot = data.geom_xmat[gs].reshape(-1, 3, 3)
    aabb = model.geom_aabb[gs]
    centre = data.geom_xpos[gs] + np.einsum("nij,nj->ni", rot, aabb[:, :3])
    half = np.einsum("nij,nj->ni", np.abs(rot), aabb[:, 3:])
    return (centre - half).min(axis=0), (centre + half).max(axis=0)


def _check_against_model(model: mujoco.MjModel, note: Annotation, file: str) -> None:
    def fail(why: str) -> SceneError:
        return SceneError(f"{file}: object {note.id!r}: {why}")

    b = mujoco.mj_name2id(model, _obj.mjOBJ_BODY, note.id)
    if b < 0:
        raise fail("there is no body of that name")
    if int(model.body_parentid[b]) != 0:
        raise fail("an object must be a top-level body (a child of the worldbody)")
    free = _free_joint(model, b) >= 0
    if "fixed" in note.tags and free:
        raise fail("tagged fixed but has a free joint")
    if "fixed" not in note.tags and not free:
        raise fail("has no free joint; tag it fixed or give it <freejoint/>")
    own = subtree(model, b)
    if note.joint is not None:
        j = mujoco.mj_name2id(model, _obj.mjOBJ_JOINT, note.joint)
        if j < 0 or int(model.jnt_bodyid[j]) not in own:
            raise fail(f"joint={note.joint} is not a joint of this object")
        if int(model.jnt_type[j]) not in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            raise fail(f"joint={note.joint} must be a hinge or a slide")
    if note.interior is not None:
        s = mujoco.mj_name2id(model, _obj.mjOBJ_SITE, note.interior)
        if s < 0 or int(model.site_bodyid[s]) not in own:
            raise fail(f"interior={note.interior} is not a site of this object")
        if int(model.site_type[s]) != mujoco.mjtGeom.mjGEOM_BOX:
            raise fail(f"interior={note.interior} must be a box site")
    if note.handle is not None:
        h = mujoco.mj_name2id(model, _obj.mjOBJ_BODY, note.handle)
        if h < 0 or h not in own:
            raise fail(f"handle={note.handle} is not a body of this object")


def _free_joint(model: mujoco.MjModel, b: int) -> int:
    adr, num = int(model.body_jntadr[b]), int(model.body_jntnum[b])
    for j in range(adr, adr + num):
        if int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_FREE:
            return j
    return -1


def _body(model: mujoco.MjModel, name: str) -> int:
    return int(mujoco.mj_name2id(model, _obj.mjOBJ_BODY, name))


def _site(model: mujoco.MjModel, name: str) -> int:
    return int(mujoco.mj_name2id(model, _obj.mjOBJ_SITE, name))


def _vec(v: NDArray[np.float64]) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))
