"""Motion relative to the camera looked through (sim.teleop._view), with no display: a screen-
frame "right" moves the end-effector so that its projection into that camera's image moves right,
"forward" moves it up the picture and "up" lifts it, from the scene's front, side (head) and top
cameras and from the free camera at several azimuths; seen through the wrist camera the scene
slides left. Points are projected with each camera's own pose (``cam_xpos``/``cam_xmat``, or the
GL camera ``mjv_updateScene`` makes of the free camera) and field of view: no pixel is rendered.
The session turns screen commands through the view it is told, and rests while nothing moves.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
import pytest
from numpy.typing import NDArray

from sim.episode import make_world, open_scenario
from sim.mujoco import PhysicsWorld
from sim.review import FreeCamera
from sim.teleop import (
    ALIGNED,
    SCREEN,
    Command,
    ScreenAxes,
    Teleop,
    TeleopSession,
    camera_axes,
    camera_id,
    to_world,
)
from storage import Project

W, H = 640, 480
STEPS = 12  # control steps of 20 ms at 0.2 m/s: about 5 cm
SPEED = 0.2


@dataclass(frozen=True)
class Pinhole:
    """A camera's pose (x right, y up, looking along -z, as MuJoCo's) and vertical field of view."""

    pos: NDArray[np.float64]
    rot: NDArray[np.float64]  # columns: the camera's x, y, z in world coordinates
    fovy: float  # degrees

    def pixel(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """(u, v) of world point ``p`` in a W×H image: u to the right, v down."""
        c = self.rot.T @ (np.asarray(p) - self.pos)
        assert c[2] < 0, "the point is behind the camera"
        f = (H / 2) / math.tan(math.radians(self.fovy) / 2)
        return np.array([W / 2 + f * c[0] / -c[2], H / 2 - f * c[1] / -c[2]])


def named(world: PhysicsWorld, camera: str) -> Pinhole:
    m, d = world.model, world.data
    cam = camera_id(m, camera, arm_root=world.scene.arm.root_body_id)
    return Pinhole(d.cam_xpos[cam].copy(), d.cam_xmat[cam].reshape(3, 3).copy(),
                   float(m.cam_fovy[cam]))  # fmt: skip


def free(world: PhysicsWorld, orbit: FreeCamera) -> Pinhole:
    """The free camera as MuJoCo's own visualizer places it (no GL context needed)."""
    m, d = world.model, world.data
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.azimuth, cam.elevation, cam.distance = orbit.azimuth, orbit.elevation, orbit.distance
    cam.lookat[:] = orbit.lookat
    scn = mujoco.MjvScene(m, maxgeom=2000)
    mujoco.mjv_updateScene(m, d, mujoco.MjvOption(), None, cam, mujoco.mjtCatBit.mjCAT_ALL, scn)
    gl = scn.camera[0]
    fwd, up = np.array(gl.forward, dtype=np.float64), np.array(gl.up, dtype=np.float64)
    rot = np.column_stack([np.cross(fwd, up), up, -fwd])
    return Pinhole(np.array(gl.pos, dtype=np.float64), rot, float(m.vis.global_.fovy))


@pytest.fixture(scope="module")
def teleop() -> Teleop:
    bound = open_scenario("stack-two")
    world = make_world(bound, "physics", arm="wb6")
    assert isinstance(world, PhysicsWorld)
    world.reset(bound.scenario.seed)
    return Teleop(world)


def ee(t: Teleop) -> NDArray[np.float64]:
    return np.array(t.world.data.site_xpos[t.arm.site_id], dtype=np.float64)


def drive(t: Teleop, screen: tuple[float, float, float], camera: str,
          orbit: FreeCamera | None = None) -> None:  # fmt: skip
    """Reset, then hold a screen-frame velocity for STEPS control steps seen through ``camera``
    (its axes read every step, as the session does), then let the arm settle."""
    t.world.reset(0)
    t.reset()
    w = t.world
    for _ in range(STEPS):
        axes = camera_axes(w.model, w.data, camera, orbit, arm_root=t.arm.root_body_id)
        t.apply(to_world(Command(linear=screen, frame=SCREEN), axes))
    for _ in range(3):
        t.apply(Command())


def moved(t: Teleop, screen: tuple[float, float, float], camera: str) -> NDArray[np.float64]:
    """How far (pixels) the end-effector moved in ``camera``'s picture under ``screen``."""
    t.world.reset(0)
    t.reset()
    before = named(t.world, camera).pixel(ee(t))
    drive(t, screen, camera)
    return named(t.world, camera).pixel(ee(t)) - before


@pytest.mark.parametrize("camera", ["front", "head", "top"])
def test_right_forward_and_up_as_seen_in_each_scene_camera(teleop: Teleop, camera: str) -> None:
    du, dv = moved(teleop, (SPEED, 0.0, 0.0), camera)
    assert du > 15 and abs(dv) < 0.35 * du, (du, dv)  # right in the picture, not up or down
    du, dv = moved(teleop, (-SPEED, 0.0, 0.0), camera)
    assert du < -15 and abs(dv) < 0.35 * -du, (du, dv)  # A: left
    du, dv = moved(teleop, (0.0, SPEED, 0.0), camera)
    assert dv < -5 and abs(du) < 0.35 * -dv, (du, dv)  # forward: up the picture (away)
    z0 = ee(teleop)[2]
    drive(teleop, (0.0, SPEED, 0.0), camera)
    assert abs(ee(teleop)[2] - z0) < 2e-3  # forward stays level: it never dives into the table
    if camera != "top":  # looking down on it, up comes toward the camera instead
        du, dv = moved(teleop, (0.0, 0.0, SPEED), camera)
        assert dv < -15 and abs(du) < 0.35 * -dv, (du, dv)


def test_the_front_camera_maps_right_to_world_plus_y(teleop: Teleop) -> None:
    """The complaint: from the default front camera (at +x, looking back along -x) D moved the
    arm to the screen's left (world -y). Right on that screen is world +y."""
    w = teleop.world
    axes = camera_axes(w.model, w.data, "front")
    np.testing.assert_allclose(axes.right, (0.0, 1.0, 0.0), atol=1e-9)
    np.testing.assert_allclose(axes.forward, (-1.0, 0.0, 0.0), atol=1e-9)
    assert axes.up == (0.0, 0.0, 1.0)


@pytest.mark.parametrize("azimuth", [0.0, 90.0, 135.0, 250.0])
def test_right_and_forward_through_the_free_camera(teleop: Teleop, azimuth: float) -> None:
    orbit = FreeCamera(azimuth=azimuth, elevation=-30.0, distance=1.8, lookat=(0.3, 0.0, 0.5))
    t = teleop
    t.world.reset(0)
    t.reset()
    before = free(t.world, orbit).pixel(ee(t))
    drive(t, (SPEED, 0.0, 0.0), "front", orbit)  # the orbit wins over the camera name
    du, dv = free(t.world, orbit).pixel(ee(t)) - before
    assert du > 15 and abs(dv) < 0.35 * du, (du, dv)
    t.world.reset(0)
    t.reset()
    before = free(t.world, orbit).pixel(ee(t))
    drive(t, (0.0, SPEED, 0.0), "front", orbit)
    du, dv = free(t.world, orbit).pixel(ee(t)) - before
    assert dv < -5, (du, dv)  # up the picture (sideways only by perspective, off centre)


def test_the_scene_slides_left_in_the_wrist_camera_when_moving_right(teleop: Teleop) -> None:
    """The wrist camera rides on the arm: "right" as it sees it moves the arm so the table under
    it slides left in its picture (its axes are read again every step as it turns)."""
    t = teleop
    t.world.reset(0)
    t.reset()
    spot = np.array(t.world.graph.nodes["brick_blue"].pos, dtype=np.float64)
    before = named(t.world, "wrist").pixel(spot)
    drive(t, (SPEED, 0.0, 0.0), "wrist")
    du, dv = named(t.world, "wrist").pixel(spot) - before
    assert du < -15 and abs(dv) < 0.35 * -du, (du, dv)


def test_to_world_keeps_world_commands_and_the_rest_of_a_screen_one() -> None:
    world_cmd = Command(linear=(0.1, 0.2, 0.3), grip=1.0)
    assert to_world(world_cmd, ScreenAxes.from_azimuth(40.0)) is world_cmd
    cmd = Command(linear=(0.1, 0.2, 0.3), angular=(0.0, 0.0, 0.5), grip=0.0, speed=0.2,
                  clutch=False, frame=SCREEN)  # fmt: skip
    got = to_world(cmd, ALIGNED)
    assert got.frame == "world" and got.linear == (0.1, 0.2, 0.3) and got.angular[2] == 0.5
    assert (got.grip, got.speed, got.clutch) == (0.0, 0.2, False)
    turned = to_world(cmd, ScreenAxes.from_azimuth(180.0))  # looking along -x: right is +y
    np.testing.assert_allclose(turned.linear, (-0.2, 0.1, 0.3), atol=1e-12)
    np.testing.assert_allclose(turned.angular, (0.0, 0.0, 0.5), atol=1e-12)  # yaw stays yaw


def test_the_controller_refuses_a_screen_command(teleop: Teleop) -> None:
    with pytest.raises(ValueError, match="to_world"):
        teleop.apply(Command(linear=(0.1, 0.0, 0.0), frame=SCREEN))


def test_a_camera_rolled_or_looking_straight_down_still_has_level_axes() -> None:
    down = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # the top camera
    axes = ScreenAxes.from_xmat(down)
    np.testing.assert_allclose(axes.right, (0.0, 1.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(axes.forward, (-1.0, 0.0, 0.0), atol=1e-12)
    rolled = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # x axis up
    axes = ScreenAxes.from_xmat(rolled)  # looks along +x: forward +x, right -y
    np.testing.assert_allclose(axes.forward, (1.0, 0.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(axes.right, (0.0, -1.0, 0.0), atol=1e-12)


def _wait(cond: object, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():  # type: ignore[operator]
            return
        time.sleep(0.01)
    raise AssertionError("timed out")


def test_the_session_moves_along_the_view_it_is_told_and_rests_when_idle() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "p"
        Project.create(root).close()
        ees: list[tuple[float, float, float]] = []
        snaps: list[int] = []
        session = TeleopSession(root, "stack-two", "wb6",
                                on_status=lambda st: ees.append(st.ee),
                                on_snapshot=lambda tick, _s: snaps.append(tick))  # fmt: skip
        try:
            assert session.ready.wait(60) and session.error is None
            _wait(lambda: len(snaps) >= 1)
            time.sleep(0.5)  # at rest: only the slow ticks, no snapshot to render
            shown, tick = len(snaps), session.tick
            time.sleep(1.0)
            assert len(snaps) == shown, "a frame was published while nothing moved"
            assert session.tick - tick <= 6  # resting: about four ticks a second, not fifty
            start = np.array(ees[-1])
            session.set_command(Command(linear=(SPEED, 0.0, 0.0), frame=SCREEN))  # front: +y
            _wait(lambda: ees[-1][1] > start[1] + 0.03)
            assert len(snaps) > shown and abs(ees[-1][0] - start[0]) < 0.01
            session.set_command(Command(frame=SCREEN))
            session.set_view("top")  # right in the top camera's picture is world -y
            time.sleep(0.3)
            here = np.array(ees[-1])
            session.set_command(Command(linear=(SPEED, 0.0, 0.0), frame=SCREEN))
            _wait(lambda: ees[-1][1] < here[1] - 0.03)
            session.set_view("front", FreeCamera(azimuth=270.0))  # free camera: left is +x
            session.set_command(Command(frame=SCREEN))
            time.sleep(0.3)
            here = np.array(ees[-1])
            session.set_command(Command(linear=(-SPEED, 0.0, 0.0), frame=SCREEN))
            _wait(lambda: ees[-1][0] > here[0] + 0.03)
        finally:
            session.close()
