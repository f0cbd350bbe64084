"""Offscreen views of a physics world: one cached renderer per image size, named cameras.

Creating a ``mujoco.Renderer`` opens a GL context, which costs far more than a frame, so renderers
are kept per (width, height) until :meth:`Views.close`. The GL platform is chosen before mujoco
is imported (:mod:`sim.gl`); commands that render call ``require_rendering`` before they
write anything, so a context that fails here is a platform that broke since. Heaters that are on
glow: a geom named ``<object>_glow`` is drawn bright while the object's ``on`` attribute holds.
"""

from __future__ import annotations

from typing import Any, Protocol

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.gl import INSTALL, RenderUnavailableError, describe, loaded_platform
from sim.mujoco._arm import subtree
from sim.mujoco._index import SceneIndex
from sim.mujoco._perturb import Push, Vec3, drag, grab
from sim.world import SceneGraph

GLOW = np.array([1.0, 0.35, 0.05, 1.0], dtype=np.float32)


class Orbit(Protocol):
    """A free camera: angles in degrees around ``lookat`` at ``distance`` metres."""

    azimuth: float
    elevation: float
    distance: float
    lookat: tuple[float, float, float]


class Views:
    def __init__(self, scene: SceneIndex) -> None:
        self.scene = scene
        self.model = scene.model
        self._renderers: dict[tuple[int, int, bool], mujoco.Renderer] = {}
        self._last: dict[tuple[int, int], mujoco.Renderer] = {}  # what the mouse measures against
        self.cameras = self._camera_ids()
        self._glow = {
            oid: g
            for oid in scene.ids
            if (g := mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, f"{oid}_glow")) >= 0
        }

    def render(
        self, data: mujoco.MjData, graph: SceneGraph, camera: str, width: int, height: int,
        *, free: Orbit | None = None, contacts: bool = False, labels: bool = False,
        shadows: bool = True, antialias: bool = True,
    ) -> NDArray[np.uint8]:  # fmt: skip
        """One frame from a named camera, or from ``free`` (orbit/pan/zoom around a point);
        ``contacts`` draws contact points and forces, ``labels`` the objects' names;
        ``shadows`` off saves most of a frame under software GL (48 → 18 ms at 640×480 on the
        stacking scene), and ``antialias`` off (no 4× multisampling) half of what is left
        (17 → 8 ms), for views that must follow a hand on the keys."""
        cam = self._camera(camera, free)
        vis = self.model.vis.global_
        if width > vis.offwidth or height > vis.offheight:
            raise ValueError(f"{width}x{height} exceeds the {vis.offwidth}x{vis.offheight} limit")
        key = (width, height, antialias)
        renderer = self._renderers.get(key)
        if renderer is None:
            quality = self.model.vis.quality
            samples = quality.offsamples  # read when the context's framebuffer is made
            try:
                if not antialias:
                    quality.offsamples = 0
                renderer = mujoco.Renderer(self.model, height, width)
            except Exception as exc:  # GL context failures come as several exception types
                platform = loaded_platform() or ""
                hint = INSTALL.get(platform, INSTALL["egl"])
                raise RenderUnavailableError(
                    f"cannot open an offscreen OpenGL context with {describe(platform)} ({exc}); "
                    f"install {hint}"
                ) from exc
            finally:
                quality.offsamples = samples
            # Planar reflections double the cost of a frame under software GL (llvmpipe) and
            # add nothing a rater needs; shadows stay: they show contact and height.
            renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
            self._renderers[key] = renderer
        self._last[(width, height)] = renderer
        opt = mujoco.MjvOption()
        if contacts:  # llvmpipe pays ~35 ms for them at full mesh detail: opt-in (mujoco-in-qt)
            opt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT] = True
            opt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTFORCE] = True
        if labels:
            opt.label = mujoco.mjtLabel.mjLABEL_BODY
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = shadows
        renderer.update_scene(data, camera=cam, scene_option=opt)
        self._light_heaters(renderer, graph)
        out: NDArray[np.uint8] = renderer.render()
        return out

    def pick(
        self, data: mujoco.MjData, camera: str, width: int, height: int, relx: float,
        rely: float, *, free: Orbit | None = None,
    ) -> str | None:  # fmt: skip
        """The object under (``relx``, ``rely``) of a frame (0..1, from the bottom-left, as
        MuJoCo measures), or None: the body MuJoCo selects, walked up to its object."""
        hit = self._select(data, camera, width, height, relx, rely, free)
        return None if hit is None else hit[0]

    def grab(
        self, data: mujoco.MjData, camera: str, width: int, height: int, relx: float,
        rely: float, *, free: Orbit | None = None,
    ) -> Push | None:  # fmt: skip
        """Start pushing the object under (``relx``, ``rely``) where the click met it, or None
        when no movable object is there (see :mod:`sim.mujoco._perturb`)."""
        hit = self._select(data, camera, width, height, relx, rely, free)
        if hit is None:
            return None
        obj, body, point = hit
        if int(self.model.body_dofnum[body]) == 0 and int(self.model.body_jntnum[body]) == 0:
            return None  # fixed to the world: nothing a spring can move
        renderer = self._last[(width, height)]
        return grab(self.model, data, renderer.scene, obj, body, point)

    def drag(
        self, data: mujoco.MjData, push: Push, camera: str, width: int, height: int,
        reldx: float, reldy: float, *, free: Orbit | None = None, horizontal: bool = False,
    ) -> Push:  # fmt: skip
        """The push with its target moved by a mouse motion seen through ``camera``."""
        renderer = self._last.get((width, height))
        if renderer is None:
            return push
        renderer.update_scene(data, camera=self._camera(camera, free))
        return drag(self.model, data, renderer.scene, push, reldx, reldy, horizontal=horizontal)

    def _select(
        self, data: mujoco.MjData, camera: str, width: int, height: int, relx: float,
        rely: float, free: Orbit | None,
    ) -> tuple[str, int, Vec3] | None:  # fmt: skip
        """(object, its body, the world point hit) under a point of the last frame, or None."""
        renderer = self._last.get((width, height))
        if renderer is None:
            return None
        cam: Any = self._camera(camera, free)
        renderer.update_scene(data, camera=cam)
        selpnt = np.zeros(3)
        ids = [np.zeros(1, np.int32) for _ in range(3)]
        body = int(mujoco.mjv_select(self.model, data, mujoco.MjvOption(), width / height,
                                     relx, rely, renderer.scene, selpnt, *ids))  # fmt: skip
        owners = {int(b): k for k, b in enumerate(self.scene.body)}
        while body > 0 and body not in owners:
            body = int(self.model.body_parentid[body])
        if body not in owners:
            return None
        x, y, z = (float(v) for v in selpnt)
        return self.scene.ids[owners[body]], body, (x, y, z)

    def close(self) -> None:
        for r in self._renderers.values():
            r.close()
        self._renderers.clear()
        self._last.clear()

    def _camera(self, camera: str, free: Orbit | None) -> Any:
        if free is not None:
            orbit = mujoco.MjvCamera()
            orbit.type = mujoco.mjtCamera.mjCAMERA_FREE
            orbit.azimuth, orbit.elevation = free.azimuth, free.elevation
            orbit.distance = free.distance
            orbit.lookat[:] = free.lookat
            return orbit
        cam = self.cameras.get(camera)
        if cam is None:
            raise ValueError(f"no camera {camera!r} (cameras: {', '.join(self.cameras)})")
        return cam

    def _light_heaters(self, renderer: mujoco.Renderer, graph: SceneGraph) -> None:
        lit = {
            g
            for oid, g in self._glow.items()
            if oid in graph.nodes and graph.nodes[oid].attrs.get("on")
        }
        if not lit:
            return
        scn = renderer.scene
        for k in range(scn.ngeom):
            geom = scn.geoms[k]
            if geom.objtype == mujoco.mjtObj.mjOBJ_GEOM and geom.objid in lit:
                geom.rgba[:] = GLOW
                geom.emission = 0.6

    def _camera_ids(self) -> dict[str, int]:
        """World cameras by name; ``wrist`` is the first camera on the arm (``arm/wrist_cam``)."""
        model = self.model
        arm_bodies = subtree(model, self.scene.arm.root_body_id)
        out: dict[str, int] = {}
        wrist: list[tuple[bool, int]] = []
        for c in range(model.ncam):
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, c) or ""
            if int(model.cam_bodyid[c]) in arm_bodies:
                wrist.append(("wrist" not in name, c))
            elif name:
                out[name] = c
        if wrist:
            out["wrist"] = min(wrist)[1]
        return out
