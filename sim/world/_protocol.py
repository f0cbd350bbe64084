"""What every world offers the episode engine (DESIGN.md §6).

Two implementations: ``sim.mujoco.PhysicsWorld`` (graph derived from MuJoCo every tick, actions
carried out by the arm controller) and ``sim.symbolic.SymbolicWorld`` (the same rules applied to
the graph directly). The engine only ever talks to this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from sim.world._actions import Action, Verdict
from sim.world._graph import SceneGraph


@dataclass(frozen=True)
class Anomaly:
    """An injected fault (W2W): displace, flip, remove or drift one object.

    ``offset`` is metres (displace), ``velocity`` metres/second in the table plane (drift),
    ``axis`` the flip axis ("x" or "y", 180°).
    """

    kind: str  # displace | flip | remove | drift
    obj: str
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    velocity: tuple[float, float] = (0.0, 0.0)
    axis: str = "x"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "obj": self.obj}
        if self.kind == "displace":
            out["offset"] = list(self.offset)
        if self.kind == "drift":
            out["velocity"] = list(self.velocity)
        if self.kind == "flip":
            out["axis"] = self.axis
        return out


ANOMALY_KINDS = ("displace", "flip", "remove", "drift")


@dataclass(frozen=True)
class Outcome:
    """How an accepted action ended once carried out: ``ok`` or ``failed: <why>``."""

    verdict: Verdict
    result: str
    started: int
    finished: int


@dataclass(frozen=True)
class TickReport:
    """What happened in one tick besides the graph: controller state, finished actions."""

    tick: int
    controller: dict[str, Any] = field(default_factory=dict)
    finished: Outcome | None = None


class World(Protocol):
    mode: str  # "physics" | "symbolic"
    delta: float  # seconds per tick
    cameras: tuple[str, ...]

    def reset(self, seed: int) -> SceneGraph: ...

    @property
    def graph(self) -> SceneGraph: ...

    @property
    def tick_index(self) -> int: ...

    @property
    def busy(self) -> bool:
        """An accepted action is still being carried out."""
        ...

    def submit(self, action: Action) -> Verdict:
        """Accept (and start carrying out) or reject; a rejection changes nothing."""
        ...

    def tick(self) -> TickReport:
        """Advance Δ seconds and recompute the graph."""
        ...

    def inject(self, anomaly: Anomaly) -> None: ...

    def render(self, camera: str, width: int = 640, height: int = 480) -> np.ndarray: ...

    def snapshot(self) -> dict[str, Any]:
        """Everything that determines the future (JSON-able, bytes as hex)."""
        ...

    def restore(self, snapshot: dict[str, Any]) -> None: ...

    def state_hash(self) -> str: ...

    def close(self) -> None: ...
