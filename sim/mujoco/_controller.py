"""The arm controller: a deterministic state machine that runs skills over many control steps.

A skill call (pick, place, push, follow, turn, home) plans the whole motion at once into plain
data segments (see ``_ctl_plan``), checking every waypoint with IK first, so an unreachable
request fails before the arm moves. ``step()`` then advances the active segment by the
simulation clock (``data.time``; no wall clock, no randomness): it interpolates the Cartesian
reference with a minimum-jerk profile, solves damped-least-squares IK warm-started from the
previous joint reference, and writes position-servo targets to ``data.ctrl``. It reads only
``qpos``/``qvel``/``time`` from the live data and recomputes everything else on scratch data,
so a run restored with ``mj_setState`` + :meth:`Controller.restore` continues bit-identically.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._arm import ArmBinding
from sim.mujoco._ctl_checks import check_segment
from sim.mujoco._ctl_plan import RETREAT, Plan, Planner
from sim.mujoco._ctl_route import Route, along, min_jerk
from sim.mujoco._ctl_world import PlanError, Refs, World, wrap
from sim.mujoco._gripper import open_fraction
from sim.mujoco._ik import jaw_yaw, mat_to_quat, quat_to_mat, slerp

Vec = NDArray[np.float64]

STATE_VERSION = 1
# How the arm moves for a given plan. Bump it with any change to trajectories or timing (here,
# _ctl_*.py, _skills.py): a physics episode recorded under another version cannot replay hash
# for hash, and replay says so instead of reporting a divergence at some tick.
# v2: pulls follow one smooth path; every move lasts at least 0.6 s (issue 9, item 14).
# v3: perception no longer puts a movable container (the pan) inside itself, which changes the
#     recorded scene graph and so every physics tick's state hash.
# v4: the gripper is measured by physics (settled open/closed, collision shapes): wb6's gap is
#     0.08999 m where it was 0.09, so every grip setting, and the arm's motion, moves a little.
MOTION_VERSION = 4
TRACK_ITERS = 6  # IK iterations per control step (warm-started, usually 1-2 suffice)
SETTLE_POS = 2e-3  # rad: joint error below which a settling segment may end
SETTLE_VEL = 0.05  # rad/s
DOWN_COS = 0.9  # the gripper counts as pointing down within about 25 degrees of vertical


class Controller:
    """Runs one skill at a time on one arm; see the module docstring."""

    def __init__(self, model: mujoco.MjModel, arm: ArmBinding) -> None:
        self.model, self.arm = model, arm
        self.world = World(model, arm)
        self.planner = Planner(self.world)
        self._kp = np.array([float(model.actuator_gainprm[a, 0]) for a in arm.actuator_ids])
        self._gear = np.array([float(model.actuator_gear[a, 0]) for a in arm.actuator_ids])
        # index lists for data.qpos/qvel/ctrl, built once (step() runs every control period)
        self._qadr, self._dadr = list(arm.qpos_adr), list(arm.dof_adr)
        self._acts, self._grips = list(arm.actuator_ids), list(arm.gripper_ids)
        # Feed gravity forward through the servo targets unless the model compensates it.
        self._feedforward = not any(model.body_gravcomp[b] for b in self.world.arm_bodies)
        self._bias = np.zeros(model.nv)
        self._written: tuple[Any, ...] | None = None  # targets last written to ...
        self._written_to: mujoco.MjData | None = None  # ... this data
        self._s: dict[str, Any] = {
            "version": STATE_VERSION,
            "skill": None,
            "phase": "idle",
            "outcome": None,
            "q_ref": None,
            "pos_ref": None,
            "quat_ref": None,
            "yaw_ref": 0.0,
            "grip": 0.0,
            "segments": [],
            "active": None,
            "memo": {},
            "held": -1,
            "failure": None,
        }

    # -- public surface ------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._s["active"] is not None or bool(self._s["segments"])

    @property
    def phase(self) -> str:
        return str(self._s["phase"])

    @property
    def outcome(self) -> str | None:
        return None if self.busy else self._s["outcome"]

    @property
    def held(self) -> int:
        """Body id the controller believes it holds, or -1."""
        return int(self._s["held"])

    def pick(self, data: mujoco.MjData, body: int) -> None:
        self._start(data, "pick", lambda r: self.planner.pick(data, r, body))

    def place(self, data: mujoco.MjData, target: Vec, *, yaw: float | None = None) -> None:
        body = self.held
        self._start(data, "place", lambda r: self.planner.place(data, r, body, target, yaw))

    def push(self, data: mujoco.MjData, body: int, direction: Vec, distance: float) -> None:
        self._start(data, "push", lambda r: self.planner.push(data, r, body, direction, distance))

    def follow(self, data: mujoco.MjData, handle_body: int, path: list[Vec]) -> None:
        self._start(data, "follow", lambda r: self.planner.follow(data, r, handle_body, path))

    def turn(self, data: mujoco.MjData, body: int, angle: float) -> None:
        """Grasp a knob from above and turn it by ``angle`` rad about world +z (CCW from above)."""
        self._start(data, "turn", lambda r: self.planner.turn(data, r, body, angle))

    def home(self, data: mujoco.MjData) -> None:
        self._start(data, "home", lambda r: self.planner.home(data, r))

    def state(self) -> dict[str, Any]:
        return copy.deepcopy(self._s)

    def state_view(self) -> dict[str, Any]:
        """The live state, uncopied: for hashing and serialising only, never to mutate."""
        return self._s

    def restore(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError(
                f"controller state version {state.get('version')!r} is not {STATE_VERSION}"
            )
        self._s = copy.deepcopy(state)
        self._written = None

    def step(self, data: mujoco.MjData) -> None:
        """Advance by one control period and write the arm and gripper controls."""
        s = self._s
        self._ensure_refs(data)
        if s["active"] is None and s["segments"]:
            self._begin(data)
        while s["active"] is not None:
            seg = s["active"]
            tau = (float(data.time) - seg["t0"]) / seg["dur"]
            self._track(data, seg, tau)
            if s["active"] is None or tau < 1.0 or not self._settled(data, seg):
                break
            self._end(data, seg)
            if s["segments"]:
                self._begin(data)
            else:
                self._finish()
        self._write(data)

    def _finish(self) -> None:
        s = self._s
        s["active"], s["phase"] = None, "done"
        s["outcome"] = "ok" if s["failure"] is None else f"failed: {s['failure']}"

    # -- skills --------------------------------------------------------------------------

    def _start(self, data: mujoco.MjData, skill: str, plan: Callable[[Refs], Plan]) -> None:
        if self.busy:
            raise RuntimeError(f"the controller is busy ({self._s['skill']}, {self.phase})")
        s = self._s
        self._ensure_refs(data)
        self.world.update(data)
        refs = Refs(
            q=np.array(s["q_ref"]), pos=np.array(s["pos_ref"]), yaw=s["yaw_ref"], grip=s["grip"]
        )
        prefix: list[dict[str, Any]] = []
        if float(quat_to_mat(s["quat_ref"])[2, 2]) > -DOWN_COS:
            # From an arbitrary posture (a fresh model, a teleop hand-over) go home in joint
            # space first, so every Cartesian move and its IK start from a known pose.
            r = Route(refs.pos, refs.yaw, refs.grip)
            prefix = r.joints("home", self.world.home, refs.q).segments
            home = self.world.refs_from(data, self.world.home, refs.grip)
            refs = Refs(
                q=home.q, pos=home.pos, yaw=refs.yaw + wrap(home.yaw - refs.yaw), grip=refs.grip
            )
        s.update(skill=skill, failure=None, outcome=None, active=None)
        try:
            segments, memo = plan(refs)
        except PlanError as exc:
            s.update(phase="done", outcome=f"failed: {exc}", segments=[])
            return
        segments = prefix + segments
        s.update(
            segments=segments,
            memo=memo,
            phase=segments[0]["phase"] if segments else "done",
            outcome=None if segments else "ok",
        )

    def _ensure_refs(self, data: mujoco.MjData) -> None:
        s = self._s
        if s["q_ref"] is not None:
            return
        q = np.array(data.qpos[self._qadr], dtype=np.float64)
        self._set_pose_from_q(data, q)
        s["grip"] = float(np.clip(1.0 - open_fraction(self.model, self.arm, data.qpos), 0, 1))

    def _set_pose_from_q(self, data: mujoco.MjData, q: Vec) -> None:
        s = self._s
        self.world.kin.load(data)
        pos, rot = self.world.kin.fk(q)
        s["q_ref"] = [float(v) for v in q]
        s["pos_ref"] = [float(v) for v in pos]
        s["quat_ref"] = mat_to_quat(rot)
        prev = float(s["yaw_ref"])
        s["yaw_ref"] = prev + wrap(jaw_yaw(rot, self.world.gripper.jaw) - prev)

    def _begin(self, data: mujoco.MjData) -> None:
        s = self._s
        seg = s["segments"].pop(0)
        seg.update(
            t0=float(data.time),
            g0=s["grip"],
            p0=s["pos_ref"],
            y0=s["yaw_ref"],
            q0=s["q_ref"],
            r0=s["quat_ref"],
        )
        down = mat_to_quat(self.world.rot(s["yaw_ref"]))
        seg["slerp"] = abs(float(np.dot(down, s["quat_ref"]))) < 1 - 1e-7
        s["active"], s["phase"] = seg, seg["phase"]

    def _track(self, data: mujoco.MjData, seg: dict[str, Any], tau: float) -> None:
        s = self._s
        k = min_jerk(tau)
        s["grip"] = seg["g0"] + min(max(tau, 0.0), 1.0) * (seg["grip"] - seg["g0"])
        if seg["kind"] == "joint":
            q = np.array(seg["q0"]) + k * (np.array(seg["q"]) - np.array(seg["q0"]))
            self._set_pose_from_q(data, q)
            return
        if seg["kind"] == "path":
            pos, yaw_k = along(np.array(seg["p0"]), float(seg["y0"]), seg, k)
        elif seg["kind"] == "cart":
            pos = np.array(seg["p0"]) + k * (np.array(seg["pos"]) - np.array(seg["p0"]))
            yaw_k = seg["y0"] + k * (seg["yaw"] - seg["y0"])
        else:
            return
        if seg["slerp"]:
            quat = slerp(seg["r0"], mat_to_quat(self.world.rot(seg["yaw"])), k)
            yaw = seg["yaw"] if k >= 1.0 else float(s["yaw_ref"])
        else:
            yaw = yaw_k
            quat = mat_to_quat(self.world.rot(yaw))
        kin = self.world.kin
        kin.load(data)
        res = kin.solve(
            np.array(s["q_ref"]),
            pos,
            quat_to_mat(quat),
            rest=self.world.home,
            iters=TRACK_ITERS,
            tol_pos=2e-4,
            tol_rot=2e-3,
            restarts=False,
        )
        s["q_ref"] = [float(v) for v in res.q]
        s["pos_ref"], s["quat_ref"], s["yaw_ref"] = [float(v) for v in pos], quat, float(yaw)
        if res.pos_err > 0.01 or res.rot_err > 0.1:
            self._fail(data, f"unreachable (tracking {seg['phase']})", recover=False)
            self._finish()

    def _settled(self, data: mujoco.MjData, seg: dict[str, Any]) -> bool:
        if seg["settle"] <= 0 or float(data.time) - seg["t0"] - seg["dur"] >= seg["settle"]:
            return True
        q = data.qpos[self._qadr]
        v = data.qvel[self._dadr]
        err = float(np.max(np.abs(q - np.array(self._s["q_ref"]))))
        return err < SETTLE_POS and float(np.max(np.abs(v))) < SETTLE_VEL

    def _end(self, data: mujoco.MjData, seg: dict[str, Any]) -> None:
        s = self._s
        if not seg["check"]:
            return
        self.world.update(data)
        reason, held = check_segment(self.world, seg["check"], s["memo"], s["held"])
        s["held"] = held
        if reason is not None:
            self._fail(data, reason, recover=seg["check"] in ("grasp", "held"))

    def _fail(self, data: mujoco.MjData, reason: str, *, recover: bool) -> None:
        s = self._s
        s["failure"] = reason
        s["segments"] = []
        if not recover:
            return
        r = Route(np.array(s["pos_ref"]), float(s["yaw_ref"]), float(s["grip"]))
        r.hold("release", 0.3, grip=self.world.gripper.grip_for_gap(s["memo"].get("gap", 0.0)))
        r.move("retreat", r.pos + np.array([0.0, 0.0, RETREAT]))
        s["segments"] = r.segments

    def _write(self, data: mujoco.MjData) -> None:
        s = self._s
        key = (tuple(s["q_ref"]), float(s["grip"]))
        if key == self._written and data is self._written_to:
            return  # targets unchanged (an idle arm): the controls already hold them
        self._written, self._written_to = key, data
        q = np.array(s["q_ref"])
        ctrl = self._gear * q
        if self._feedforward:
            kin = self.world.kin
            kin.load(data)
            kin.set_arm(q)
            mujoco.mj_rne(self.model, kin.data, 0, self._bias)
            ctrl += self._bias[self._dadr] / (self._gear * self._kp)
        data.ctrl[self._acts] = ctrl
        data.ctrl[self._grips] = self.world.gripper.ctrl(float(s["grip"]))
