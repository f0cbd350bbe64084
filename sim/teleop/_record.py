"""Recording demonstrations: start, next, re-record, stop, with the world reset between them.

A :class:`Recorder` owns a physics world of one scenario and arm, and the :class:`Teleop` on
it. Each control step (:meth:`Recorder.step`) it samples what the arm and the scene are *before*
the command acts — joints, jaw opening, end-effector pose, the full MuJoCo integration state,
the scene graph, the asked cameras — then applies the command and keeps the action actually
applied. So row ``i`` is the classic (observation, action) pair, and re-applying the actions
from the same reset reproduces every state (see ``_replay``).

Every demonstration starts from the scenario's seeded layout (``seed``, by default the
scenario's own), so ten demonstrations are ten ways of solving the same task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.contracts import evaluate
from sim.episode import make_world, resolve_arm
from sim.mujoco import PhysicsWorld, compose_spec, open_fraction, scene_path
from sim.teleop._control import Command, StepReport, Teleop
from sim.teleop._demo import ACTION_NAMES, Demonstration, Span

if TYPE_CHECKING:
    from sim.episode import ResolvedArm
    from sim.scenario import BoundScenario
    from storage import Project

F64 = NDArray[np.float64]
STATE_SPEC = mujoco.mjtState.mjSTATE_INTEGRATION


def model_xml(world: PhysicsWorld, arm: ResolvedArm) -> str:
    """The composed scene (scene + arm) as one MJCF text.

    ``mj_saveLastXML`` cannot do it: a composed model is compiled from an ``MjSpec``, not
    parsed from XML, so MuJoCo has no "last XML" (or one of another model). Composing the
    spec again and writing it with ``MjSpec.to_xml`` gives a file that compiles to the same
    model (same sizes, same trajectory step for step, checked for wb6 and lab7)."""
    spec = compose_spec(scene_path(world.family), arm.spec)
    spec.compile()  # to_xml needs a compiled spec
    return str(spec.to_xml())


#: seconds per control step when a person drives the arm in the window: 50 steps a second, so
#: a key press is picked up within 20 ms (the scenarios' 0.1 s tick would add up to 100 ms)
TELEOP_DELTA = 0.02


class Recorder:
    """Records demonstrations of ``bound`` on ``arm`` (a shipped arm or a ``project``'s
    profile); see the module docstring. ``cameras`` are rendered every step at ``size``."""

    def __init__(
        self,
        bound: BoundScenario,
        arm: str = "wb6",
        *,
        project: Project | None = None,
        seed: int | None = None,
        cameras: tuple[str, ...] = (),
        size: tuple[int, int] = (320, 240),
        workspace: tuple[F64, F64] | None = None,
        delta: float | None = None,
    ) -> None:
        """``delta``: seconds per control step (the scenario's tick unless given; the teleop
        workspace uses :data:`TELEOP_DELTA`, so a key press is picked up within 20 ms)."""
        self.bound = bound
        self.arm = resolve_arm(arm, project)
        world = make_world(bound, "physics", arm=self.arm, delta=delta)
        assert isinstance(world, PhysicsWorld)
        self.world = world
        self.seed = bound.scenario.seed if seed is None else int(seed)
        self.cameras, self.size = tuple(cameras), size
        world.reset(self.seed)
        self.teleop = Teleop(world, workspace=workspace)
        self.demos: list[Demonstration] = []
        self.spans: list[Span] = []  # of the demonstration being recorded
        self._xml: str | None = None
        self._rows: dict[str, list[Any]] | None = None

    @property
    def recording(self) -> bool:
        return self._rows is not None

    @property
    def steps(self) -> int:
        """Steps recorded so far in the current demonstration."""
        return 0 if self._rows is None else len(self._rows["t"])

    def start(self) -> None:
        """Reset the world to the seeded layout and start a new demonstration."""
        if self._rows is not None:
            raise RuntimeError("already recording: next(), rerecord() or stop() first")
        self._reset()

    def step(self, cmd: Command) -> StepReport:
        """Sample the world, then run one control step under ``cmd`` (recorded when
        recording; a step outside a recording just moves the arm)."""
        if self._rows is not None:
            self._sample(self._rows)
        report = self.teleop.apply(cmd)
        if self._rows is not None:
            self._rows["action"].append(report.action)
        return report

    def mark(self, span: Span) -> None:
        """Label a stretch of the current demonstration (e.g. a takeover)."""
        if not 0 <= span.start <= span.end < max(1, self.steps):
            raise ValueError(f"span {span.start}–{span.end} is outside steps 0–{self.steps - 1}")
        self.spans.append(span)

    def next(self) -> Demonstration:
        """Keep the current demonstration and start the next one from a fresh reset."""
        demo = self._finish()
        self._reset()
        return demo

    def rerecord(self) -> None:
        """Discard the current demonstration and record it again from a fresh reset."""
        if self._rows is None:
            raise RuntimeError("not recording")
        self._reset()

    def stop(self) -> list[Demonstration]:
        """Keep the current demonstration (if it has any step) and stop; returns them all."""
        if self._rows is not None and self._rows["t"]:
            self._finish()
        self._rows = None
        return list(self.demos)

    def close(self) -> None:
        self.teleop.close()
        self.world.close()

    # -- internals -------------------------------------------------------------------------
    def _reset(self) -> None:
        self.world.reset(self.seed)
        self.teleop.reset()
        self.spans = []
        self._rows = {k: [] for k in ("t", "q", "dq", "grip", "pos", "quat", "state", "graph",
                                      "action", *(f"cam:{c}" for c in self.cameras))}  # fmt: skip

    def _sample(self, rows: dict[str, list[Any]]) -> None:
        w, arm = self.world, self.world.scene.arm
        data, model = w.data, w.model
        rows["t"].append(float(data.time))
        rows["q"].append(np.array(data.qpos[list(arm.qpos_adr)], dtype=np.float64))
        rows["dq"].append(np.array(data.qvel[list(arm.dof_adr)], dtype=np.float64))
        rows["grip"].append(open_fraction(model, arm, data.qpos))
        rows["pos"].append(np.array(data.site_xpos[arm.site_id], dtype=np.float64))
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.asarray(data.site_xmat[arm.site_id], dtype=np.float64))
        rows["quat"].append(quat)
        state = np.zeros(mujoco.mj_stateSize(model, STATE_SPEC))
        mujoco.mj_getState(model, data, state, STATE_SPEC)
        rows["state"].append(state)
        rows["graph"].append(w.graph.to_json_text())
        for cam in self.cameras:
            rows[f"cam:{cam}"].append(np.asarray(w.render(cam, *self.size), dtype=np.uint8))

    def _finish(self) -> Demonstration:
        rows = self._rows
        if rows is None:
            raise RuntimeError("not recording")
        if not rows["t"]:
            raise RuntimeError("nothing recorded yet: send at least one step")
        if self._xml is None:
            self._xml = model_xml(self.world, self.arm)
        b = self.bound
        outcome = evaluate(b.contract, self.world.graph, [])
        t = len(rows["t"])
        demo = Demonstration(
            name=f"demo_{len(self.demos)}",
            scenario=b.name,
            task=b.scenario.instruction,
            arm=self.arm.label,
            fps=1.0 / self.world.delta,
            timestamps=np.array(rows["t"], dtype=np.float64),
            joint_names=self.teleop.joint_names,
            joint_pos=np.array(rows["q"]).reshape(t, -1),
            joint_vel=np.array(rows["dq"]).reshape(t, -1),
            gripper=np.array(rows["grip"], dtype=np.float64),
            ee_pos=np.array(rows["pos"]),
            ee_quat=np.array(rows["quat"]),
            actions=np.array(rows["action"]).reshape(t, len(ACTION_NAMES)),
            states=np.array(rows["state"]),
            model_xml=self._xml,
            success=outcome.satisfied,
            frames={c: np.stack(rows[f"cam:{c}"]) for c in self.cameras},
            graphs=tuple(rows["graph"]),
            spans=tuple(self.spans),
            meta={
                "seed": self.seed, "source": b.source, "scenario_sha": b.scenario.digest,
                "arm_digest": self.arm.digest, "delta": self.world.delta,
                "control_period": self.world.control_period,
                "workspace": [[float(v) for v in a] for a in self.teleop.workspace],
                "max_linear": self.teleop.max_linear, "max_angular": self.teleop.max_angular,
                "conditions": [c.value.value for c in outcome.conditions],
            },
        )  # fmt: skip
        demo.check()
        self.demos.append(demo)
        self._rows = None
        return demo
