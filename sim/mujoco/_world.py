"""The MuJoCo tabletop world: physics underneath, the shared semantic surface on top.

:class:`PhysicsWorld` implements :class:`sim.world.World`. Its scene graph is perceived from
contacts and geometry after every tick; accepted actions are carried out by the arm
:class:`~sim.mujoco._controller.Controller` over many physics steps (``delta`` seconds per tick,
the controller stepped every ``control_period``). The world itself owns only what physics does
not model: cooking levels, drift anomalies, which objects are parked off-table, and the action
in progress. Everything that determines the future is in :meth:`snapshot`, so a restored world
continues bit-identically and :meth:`state_hash` can prove it.
"""

from __future__ import annotations

from typing import Any, Protocol

import mujoco  # type: ignore[import-untyped]
import numpy as np

from sim.mujoco._anomaly import apply_drifts, inject
from sim.mujoco._arm import WB6, ArmSpec
from sim.mujoco._controller import Controller
from sim.mujoco._index import SceneIndex, contact_points, scene_index
from sim.mujoco._perceive import perceive
from sim.mujoco._perturb import Push, apply
from sim.mujoco._placing import arm_home, park, place_all, set_attrs
from sim.mujoco._render import Views
from sim.mujoco._skills import effect_missing, start_skill
from sim.mujoco._state import WorldState, digest, from_snapshot, to_snapshot
from sim.world import (
    Action,
    Anomaly,
    Check,
    Layout,
    Outcome,
    SceneGraph,
    TickReport,
    Verb,
    Verdict,
    check,
    heat_step,
    sample_layout,
    set_cooked,
)

SETTLE_SECONDS = 0.5


class Manual(Protocol):
    """Something that drives the arm by hand (teleoperation) instead of the controller: its
    ``step(data)`` writes ``data.ctrl`` once per control period, as ``Controller.step`` does."""

    def step(self, data: mujoco.MjData) -> None: ...


class PhysicsWorld:
    """A :class:`sim.world.World` simulated with MuJoCo; see the module docstring."""

    mode = "physics"
    cameras: tuple[str, ...] = ("head", "wrist", "top", "front")

    def __init__(
        self,
        family: str,
        layout: Layout,
        *,
        arm: ArmSpec = WB6,
        delta: float = 0.1,
        control_period: float = 0.05,
    ) -> None:
        self.family, self.layout, self.delta = family, layout, delta
        self.scene: SceneIndex = scene_index(family, arm)
        self.model = self.scene.model
        dt = float(self.model.opt.timestep)
        self._substeps = max(1, round(control_period / dt))
        self._periods = max(1, round(delta / (self._substeps * dt)))
        if abs(self._periods * self._substeps * dt - delta) > 1e-9:
            # e.g. Δ = 0.13 s with a 50 ms control period: the tick would silently be 0.15 s
            self._substeps = max(1, round(delta / dt))
            self._periods = 1
            if abs(self._substeps * dt - delta) > 1e-9:
                raise ValueError(f"delta {delta} s is not a whole number of {dt} s physics steps")
        self.info = self.scene.info
        self.data = mujoco.MjData(self.model)
        arm_home(self.scene, self.data)
        mujoco.mj_forward(self.model, self.data)
        self.controller = Controller(self.model, self.scene.arm)
        self._idle_controller = self.controller.state()
        self._views: Views | None = None
        self._push: Push | None = None  # a body pushed by hand (live mode only; not replayable)
        self._manual: Manual | None = None  # see set_manual
        self.s = WorldState()
        self._graph = self._perceive()  # the MJCF's default arrangement until reset()

    # -- World protocol ----------------------------------------------------------------------
    def reset(self, seed: int) -> SceneGraph:
        model, scene = self.model, self.scene
        placed = sample_layout(self.layout, scene.info, seed)
        data = self.data
        mujoco.mj_resetData(model, data)
        self.controller.restore(self._idle_controller)
        arm_home(scene, data)
        extra = set_attrs(scene, data, self.layout.attrs)
        parked = sorted(
            o for i, o in enumerate(scene.ids) if scene.free_qadr[i] >= 0 and o not in placed
        )
        park(scene, data, parked)
        place_all(scene, data, placed)
        mujoco.mj_forward(model, data)
        mujoco.mj_step(model, data, round(SETTLE_SECONDS / float(model.opt.timestep)))
        data.time = 0.0
        mujoco.mj_forward(model, data)
        self.s = WorldState(extra=extra, parked=set(parked))
        self._graph = self._perceive()
        return self._graph

    @property
    def graph(self) -> SceneGraph:
        return self._graph

    @property
    def tick_index(self) -> int:
        return self.s.tick

    @property
    def busy(self) -> bool:
        return self.s.verdict is not None

    def submit(self, action: Action) -> Verdict:
        """Accept and start, or reject without touching anything (not even the controller)."""
        if self._manual is not None:
            why = "the arm is under manual control (teleoperation)"
            return Verdict(action, False, None, (Check("busy", why),))
        if self.s.verdict is not None:
            doing = self.s.verdict.action.describe()
            return Verdict(
                action, False, None, (Check("busy", f"the arm is still carrying out {doing}"),)
            )
        verdict = check(self._graph, action)
        if not verdict.accepted:
            return verdict
        g = verdict.grounded
        before = self.controller.state()
        picked_from = dict(self.s.picked_from)
        if action.verb is Verb.PICK and g is not None and g.obj is not None:
            node = self._graph.nodes[g.obj]
            picked_from[g.obj] = (node.pos[0], node.pos[1])
        skill = start_skill(
            self.controller, self.data, self.scene, self._graph, verdict, picked_from
        )
        outcome = self.controller.outcome
        if skill and not self.controller.busy and outcome and outcome.startswith("failed"):
            # The arm cannot do it (out of reach, too wide to grasp): planning failed before
            # anything moved. That is a failed precondition of this arm, so it is a rejection
            # and, like every rejection, leaves the world exactly as it was.
            self.controller.restore(before)
            why = outcome.removeprefix("failed: ")
            return Verdict(action, False, g, (Check("feasible", f"the arm cannot: {why}"),))
        self.s.picked_from = picked_from
        self.s.skill = skill
        self.s.verdict, self.s.started = verdict, self.s.tick
        self.s.wait_left = action.ticks if action.verb is Verb.WAIT else 0
        return verdict

    def tick(self) -> TickReport:
        model, data = self.model, self.data
        ctl: Controller | Manual = self.controller if self._manual is None else self._manual
        for _ in range(self._periods):
            ctl.step(data)
            if self._push is None:
                mujoco.mj_step(model, data, self._substeps)
            else:  # the spring follows the body: its force is set again before every step
                for _ in range(self._substeps):
                    apply(model, data, self._push)
                    mujoco.mj_step(model, data)
        if self.s.drifts:
            apply_drifts(self.scene, data, self.s.drifts, self._graph.held(), self.delta)
        # Poses and contacts of the state just reached, for perception. Not mj_forward: a solver
        # pass here costs as much as a step and would change nothing the next step uses.
        mujoco.mj_kinematics(model, data)
        mujoco.mj_collision(model, data)
        self.s.tick += 1
        self._graph = self._cook(self._perceive())
        finished = self._finish_action()
        return TickReport(self.s.tick, self._controller_report(), finished)

    def inject(self, anomaly: Anomaly) -> None:
        if anomaly.obj not in self._graph.nodes:
            return  # as in the symbolic mode: an anomaly on an absent object does nothing
        inject(self.scene, self.data, anomaly, self.s)
        mujoco.mj_forward(self.model, self.data)
        self._graph = self._perceive()

    def render(
        self, camera: str, width: int = 640, height: int = 480, **options: Any
    ) -> np.ndarray:
        """A frame from a named camera; ``options``: ``free``, ``contacts``, ``labels``
        (see :meth:`Views.render`)."""
        if self._views is None:
            self._views = Views(self.scene)
        return self._views.render(self.data, self._graph, camera, width, height, **options)

    def pick(
        self, camera: str, relx: float, rely: float, width: int = 640, height: int = 480,
        **options: Any,
    ) -> str | None:  # fmt: skip
        """The object under a point of the last frame rendered at this size (see
        :meth:`Views.pick`); ``options`` as for :meth:`render` (only ``free`` matters)."""
        if self._views is None:
            return None
        return self._views.pick(self.data, camera, width, height, relx, rely,
                                free=options.get("free"))  # fmt: skip

    def grab(
        self, camera: str, relx: float, rely: float, width: int = 640, height: int = 480,
        **options: Any,
    ) -> Push | None:  # fmt: skip
        """Start a hand push of the object under a point of the last frame rendered at this
        size (see :mod:`sim.mujoco._perturb`); None when nothing movable is there."""
        if self._views is None:
            return None
        return self._views.grab(self.data, camera, width, height, relx, rely,
                                free=options.get("free"))  # fmt: skip

    def drag(
        self, push: Push, camera: str, reldx: float, reldy: float, width: int = 640,
        height: int = 480, *, horizontal: bool = False, **options: Any,
    ) -> Push:  # fmt: skip
        """``push`` with its target moved by a mouse motion (fractions of the height, y up)."""
        if self._views is None:
            return push
        return self._views.drag(self.data, push, camera, width, height, reldx, reldy,
                                free=options.get("free"), horizontal=horizontal)  # fmt: skip

    def push(self, push: Push | None) -> None:
        """Pull a body toward the push's target on every physics step until ``None``."""
        self._push = push
        if push is None:
            self.data.xfrc_applied[:] = 0.0

    @property
    def control_period(self) -> float:
        """Seconds between two control steps of the arm (controller or manual)."""
        return self._substeps * float(self.model.opt.timestep)

    @property
    def manual(self) -> Manual | None:
        return self._manual

    def set_manual(self, manual: Manual | None) -> None:
        """Drive the arm with ``manual`` every control period instead of the controller (None:
        give it back). Refused while a skill runs: the two would fight over the servos. On
        hand-back the controller takes up the arm where the person left it (its references are
        re-read from ``qpos`` on its next step), not where its last skill ended."""
        if manual is not None and self.busy:
            raise RuntimeError("the arm is carrying out an action; wait for it to finish")
        if manual is None and self._manual is not None:
            st = self.controller.state()
            st.update(q_ref=None, pos_ref=None, quat_ref=None, phase="idle")
            self.controller.restore(st)
        self._manual = manual

    def snapshot(self) -> dict[str, Any]:
        return to_snapshot(self.model, self.data, self.controller.state_view(), self.s)

    def restore(self, snapshot: dict[str, Any]) -> None:
        ctl_state, self.s = from_snapshot(self.model, self.data, snapshot)
        self.controller.restore(ctl_state)
        mujoco.mj_forward(self.model, self.data)
        self._graph = self._perceive()

    def state_hash(self) -> str:
        return digest(self.model, self.data, self.controller.state_view(), self.s)

    def close(self) -> None:
        if self._views is not None:
            self._views.close()
            self._views = None

    # -- internals ---------------------------------------------------------------------------
    def _perceive(self) -> SceneGraph:
        return perceive(
            self.model,
            self.data,
            self.scene,
            self.s.tick,
            self.s.extra,
            absent=frozenset(self.s.parked),
        )

    def _cook(self, graph: SceneGraph) -> SceneGraph:
        """Integrate cooking over the tick (the world owns the levels; physics has no heat)."""
        levels = heat_step(graph, self.delta)
        for obj, level in sorted(levels.items()):
            self.s.extra.setdefault(obj, {})["cooked"] = round(level, 6)
        return set_cooked(graph, levels)

    def _controller_report(self) -> dict[str, Any]:
        """What the trace keeps of the arm each tick (never hashed): the skill and its phase,
        the end effector's position and the contact points touching objects, in millimetres
        (the episode view draws the arm's path and the contacts from them)."""
        ctl = self.controller
        ee = self.data.site_xpos[self.scene.arm.site_id]
        return {"skill": self.s.skill or None, "phase": ctl.phase, "busy": self.busy,
                "ee": [round(float(v) * 1000) for v in ee],
                "contacts": contact_points(self.scene, self.data)}  # fmt: skip

    def _finish_action(self) -> Outcome | None:
        s = self.s
        verdict = s.verdict
        if verdict is None:
            return None
        if s.skill == "":
            s.wait_left -= 1
            if s.wait_left > 0:
                return None
            result = "ok"
        elif self.controller.busy:
            return None
        else:
            result = self.controller.outcome or "ok"
            if result == "ok":
                missing = effect_missing(self._graph, verdict)
                if missing:
                    result = f"failed: {missing}"
        s.verdict, s.skill, s.wait_left = None, "", 0
        return Outcome(verdict, result, s.started, s.tick)
