"""Motion relative to the screen: "right" moves the arm right in the picture being looked at.

Every hand device (the keys, a gamepad, a SpaceMouse) gives its command in the *screen frame*:
``linear = (right, forward, up)`` and ``angular`` about those same axes, as seen through the
camera the person has chosen. This module is the one place that turns such a command into the
world-frame :class:`~sim.teleop.Command` the controller tracks, so the devices can never
disagree with each other or with the picture.

The camera's axes are projected onto the horizontal plane: ``right`` is the image's x axis
with its vertical part removed, ``forward`` is horizontal and away from the viewer
(``up × right``), and ``up`` is always world +z. So "forward" never dives into the table from
a camera looking down, and up/down are the same whatever the view. A camera looking straight
down (the top view) has a horizontal image x axis, so its "forward" is the picture's up.

A named camera's orientation is MuJoCo's ``data.cam_xmat`` (its columns are the camera's x
(right), y (up) and -viewing axes in world coordinates), read every control step so a camera
that moves with the arm (the wrist) stays right too. The free camera is MuJoCo's orbit camera:
its azimuth alone fixes the horizontal axes (``right = (sin a, -cos a, 0)``, as MuJoCo's
``mjv_updateCamera`` makes it and ``sim.review.FreeCamera.pan`` moves it).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Protocol

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.teleop._control import SCREEN, WORLD, Command

Vec3 = tuple[float, float, float]
UP: Vec3 = (0.0, 0.0, 1.0)
_DEGENERATE = 1e-6  # an axis this short after projection has no horizontal direction


class Orbiting(Protocol):
    """The free camera as far as motion cares: its azimuth in degrees (``sim.review.FreeCamera``
    and anything else with one)."""

    @property
    def azimuth(self) -> float: ...


@dataclass(frozen=True)
class ScreenAxes:
    """The screen frame in world coordinates: unit vectors, ``right`` and ``forward``
    horizontal, ``up`` world +z (see the module docstring)."""

    right: Vec3
    forward: Vec3
    up: Vec3 = UP

    @staticmethod
    def from_xmat(xmat: NDArray[np.float64]) -> ScreenAxes:
        """The axes of a camera whose orientation is ``xmat`` (MuJoCo's ``cam_xmat``, 9 values
        row-major or 3×3)."""
        m = np.asarray(xmat, dtype=np.float64).reshape(3, 3)
        right = _horizontal(m[:, 0])
        if right is None:  # the image's x axis is vertical (a camera rolled 90°), so the
            away = _horizontal(-m[:, 2])  # direction it looks in is level: forward is that
            if away is None:  # not a rotation matrix
                return ALIGNED
            right = np.cross(away, UP)
        forward = np.cross(UP, right)
        return ScreenAxes(_vec(right), _vec(forward))

    @staticmethod
    def from_azimuth(azimuth: float) -> ScreenAxes:
        """The axes of MuJoCo's free (orbit) camera at ``azimuth`` degrees."""
        a = math.radians(azimuth)
        return ScreenAxes((math.sin(a), -math.cos(a), 0.0), (math.cos(a), math.sin(a), 0.0))

    def matrix(self) -> NDArray[np.float64]:
        """World ← screen: columns right, forward, up."""
        return np.column_stack([self.right, self.forward, self.up]).astype(np.float64)


#: the screen frame that is the world frame: a viewer on -y looking along +y (right = +x)
ALIGNED = ScreenAxes((1.0, 0.0, 0.0), (0.0, 1.0, 0.0))


def to_world(cmd: Command, axes: ScreenAxes) -> Command:
    """``cmd`` in the world frame: a screen-frame command turned through ``axes``; a world-frame
    one is returned as it is. Grip, speed and clutch are kept."""
    if cmd.frame == WORLD:
        return cmd
    if cmd.frame != SCREEN:
        raise ValueError(f"command frame {cmd.frame!r}: expected {WORLD!r} or {SCREEN!r}")
    m = axes.matrix()
    return dataclasses.replace(
        cmd,
        linear=_vec(m @ np.asarray(cmd.linear, dtype=np.float64)),
        angular=_vec(m @ np.asarray(cmd.angular, dtype=np.float64)),
        frame=WORLD,
    )


def camera_axes(
    model: mujoco.MjModel, data: mujoco.MjData, camera: str, free: Orbiting | None = None, *,
    arm_root: int = 0,
) -> ScreenAxes:  # fmt: skip
    """The screen frame of ``camera`` as it is in ``data`` now (``free``: the orbit camera,
    whatever ``camera`` says). ``wrist`` names the arm's camera (see :func:`camera_id`); an
    unknown name is refused."""
    if free is not None:
        return ScreenAxes.from_azimuth(float(free.azimuth))
    cam = camera_id(model, camera, arm_root=arm_root)
    return ScreenAxes.from_xmat(np.asarray(data.cam_xmat[cam], dtype=np.float64))


def world_command(world: Any, cmd: Command, camera: str, free: Orbiting | None = None) -> Command:
    """``cmd`` in world axes: through ``camera``'s axes in ``world`` (a physics world) as they
    are now (the wrist camera moves with the arm). A world-frame command, or one that moves
    nothing, needs no axes; a camera the scene does not have leaves the world's own axes."""
    if cmd.frame == WORLD or not (any(cmd.linear) or any(cmd.angular)):
        return to_world(cmd, ALIGNED)
    try:
        axes = camera_axes(world.model, world.data, camera, free,
                           arm_root=world.scene.arm.root_body_id)  # fmt: skip
    except ValueError:
        axes = ALIGNED
    return to_world(cmd, axes)


def camera_id(model: mujoco.MjModel, camera: str, *, arm_root: int = 0) -> int:
    """The id of a scene camera by name. ``wrist`` is, as the renderer has it, the first camera
    on the arm (the bodies below ``arm_root``) with "wrist" in its name, else the first one on
    it: the arm's own MJCF names it as it likes (``arm/wrist_cam``)."""
    cam = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera))
    if cam < 0 and camera == "wrist":
        on_arm = [c for c in range(model.ncam) if _below(model, int(model.cam_bodyid[c]), arm_root)]
        named = [c for c in on_arm if "wrist" in (_name(model, c) or "")]
        cam = (named or on_arm or [-1])[0]
    if cam < 0:
        names = [n for c in range(model.ncam) if (n := _name(model, c))]
        raise ValueError(f"no camera {camera!r} (cameras: {', '.join(names)})")
    return cam


def _name(model: mujoco.MjModel, cam: int) -> str | None:
    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, cam)
    return str(name) if name else None


def _below(model: mujoco.MjModel, body: int, root: int) -> bool:
    """Whether ``body`` is ``root`` or hangs from it; with no root (0), any body but the
    world's (a camera on the world body is a scene camera, never the arm's)."""
    if root <= 0:
        return body > 0
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return False


def _horizontal(v: NDArray[np.float64]) -> NDArray[np.float64] | None:
    h = np.array([v[0], v[1], 0.0], dtype=np.float64)
    n = float(np.linalg.norm(h))
    return None if n < _DEGENERATE else h / n


def _vec(v: NDArray[np.float64]) -> Vec3:
    return (float(v[0]), float(v[1]), float(v[2]))
