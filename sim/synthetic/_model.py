"""Typed records of the synthetic tabletop: objects, scenes, subgoals, defects, plans, truth."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

ObjectKind = Literal["block", "cup", "plate", "box", "mat", "fruit"]
Relation = Literal["on", "in"]
DefectKind = Literal[
    "teleport",
    "duplicate",
    "vanish",
    "pass_through",
    "float_off",
    "hover",
    "unfinished",
    "wrong_target",
    "no_attempt",
]
RolloutStyle = Literal["generated", "human"]
TableKind = Literal["oak", "walnut", "linen"]

DEFECT_KINDS: tuple[DefectKind, ...] = get_args(DefectKind)

# The rubric gate each defect is meant to fail (spec/ego2act.md §2.3-§2.4).
DEFECT_GATES: dict[DefectKind, str] = {
    "teleport": "P1",
    "duplicate": "P1",
    "vanish": "P1",
    "pass_through": "P3",
    "float_off": "P2",
    "hover": "P4",
    "unfinished": "T1",
    "wrong_target": "T3",
    "no_attempt": "T1",
}

# Saturated, well separated hues so that a colour name is also a reliable pixel mask.
COLORS: dict[str, tuple[int, int, int]] = {
    "red": (206, 38, 40),
    "blue": (38, 88, 204),
    "green": (38, 158, 72),
    "yellow": (240, 198, 28),
    "orange": (242, 128, 20),
    "purple": (128, 58, 172),
    "white": (236, 236, 230),
    "brown": (168, 128, 88),
    "grey": (130, 136, 144),
}

# Default extents per kind, in table units (one unit is roughly 25 cm).
_DEFAULT_EXTENTS: dict[ObjectKind, tuple[float, float, float]] = {
    # kind: (half width, half depth, height)
    "block": (0.14, 0.14, 0.26),
    "cup": (0.16, 0.16, 0.34),
    "plate": (0.42, 0.42, 0.04),
    "box": (0.55, 0.42, 0.30),
    "mat": (0.56, 0.34, 0.012),
    "fruit": (0.15, 0.15, 0.30),
}

FLAT_KINDS: frozenset[ObjectKind] = frozenset({"plate", "mat"})
BOX_WALL = 0.06  # wall thickness of a box, table units
BOX_FLOOR = 0.025  # height of a box floor above the table


@dataclass(frozen=True)
class SceneObject:
    """One object on the table, at rest; x across (-1.6..1.6), y away from the viewer (0..2.7)."""

    name: str
    kind: ObjectKind
    color: str
    x: float
    y: float
    half_w: float
    half_d: float
    height: float

    def __post_init__(self) -> None:
        if self.color not in COLORS:
            raise ValueError(f"object {self.name!r}: unknown colour {self.color!r}")
        if self.kind not in _DEFAULT_EXTENTS:
            raise ValueError(f"object {self.name!r}: unknown kind {self.kind!r}")

    @classmethod
    def make(
        cls, name: str, kind: ObjectKind, color: str, x: float, y: float, scale: float = 1.0
    ) -> SceneObject:
        """An object with the default extents of its kind (scaled)."""
        hw, hd, h = _DEFAULT_EXTENTS[kind]
        return cls(name, kind, color, x, y, hw * scale, hd * scale, h * scale)

    @property
    def flat(self) -> bool:
        return self.kind in FLAT_KINDS

    @property
    def radius(self) -> float:
        return max(self.half_w, self.half_d)


@dataclass(frozen=True)
class Scene:
    """The initial layout of a tabletop."""

    objects: tuple[SceneObject, ...]
    table: TableKind = "oak"

    def __post_init__(self) -> None:
        names = [o.name for o in self.objects]
        if len(set(names)) != len(names):
            raise ValueError(f"scene: duplicate object names in {names}")

    def object(self, name: str) -> SceneObject:
        for o in self.objects:
            if o.name == name:
                return o
        raise KeyError(f"scene has no object named {name!r}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.objects)


@dataclass(frozen=True)
class Subgoal:
    """One atomic placement: move `source` on/in `target` (reach, grasp, carry, release)."""

    source: str
    target: str
    relation: Relation = "on"

    @property
    def text(self) -> str:
        return f"put the {self.source} {self.relation} the {self.target}"


@dataclass(frozen=True)
class Defect:
    """A defect injected into subgoal `subgoal` (0-based). For `unfinished` the rollout stops
    before that subgoal; `no_attempt` ignores the index."""

    kind: DefectKind
    subgoal: int = 0

    def __post_init__(self) -> None:
        if self.kind not in DEFECT_KINDS:
            raise ValueError(f"unknown defect kind {self.kind!r}")


@dataclass(frozen=True)
class RolloutPlan:
    """A scripted rollout: subgoals executed in order on `scene`, with optional defects."""

    scene: Scene
    subgoals: tuple[Subgoal, ...]
    defects: tuple[Defect, ...] = ()
    style: RolloutStyle = "generated"

    def __post_init__(self) -> None:
        names = set(self.scene.names)
        for i, sg in enumerate(self.subgoals):
            for role, name in (("source", sg.source), ("target", sg.target)):
                if name not in names:
                    raise ValueError(f"subgoal {i}: {role} {name!r} is not in the scene")
            if sg.relation == "in" and self.scene.object(sg.target).kind != "box":
                raise ValueError(f"subgoal {i}: 'in' needs a box target, got {sg.target!r}")
        seen: set[int] = set()
        for d in self.defects:
            if d.kind == "no_attempt":
                if len(self.defects) > 1:
                    raise ValueError("defect no_attempt cannot be combined with other defects")
                continue
            if not 0 <= d.subgoal < len(self.subgoals):
                raise ValueError(f"defect {d.kind}: subgoal {d.subgoal} out of range")
            if d.subgoal in seen:
                raise ValueError(f"defect {d.kind}: subgoal {d.subgoal} already has a defect")
            seen.add(d.subgoal)
            sg = self.subgoals[d.subgoal]
            if d.kind == "pass_through" and sg.relation != "in":
                raise ValueError(f"defect pass_through needs an 'in' subgoal, not {sg.text!r}")
            later = {n for s in self.subgoals[d.subgoal + 1 :] for n in (s.source, s.target)}
            if d.kind == "hover" and sg.source in later:
                raise ValueError(f"defect hover: {sg.source!r} is used again by a later subgoal")

    def defect_at(self, subgoal: int) -> DefectKind | None:
        for d in self.defects:
            if d.subgoal == subgoal and d.kind != "no_attempt":
                return d.kind
        return None

    def has(self, kind: DefectKind) -> bool:
        return any(d.kind == kind for d in self.defects)


@dataclass(frozen=True)
class DefectWindow:
    """Where an injected defect is visible, in source-video seconds."""

    kind: DefectKind
    subgoal: int
    start_s: float
    end_s: float

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "subgoal": self.subgoal,
            "start_s": round(self.start_s, 2),
            "end_s": round(self.end_s, 2),
        }


@dataclass(frozen=True)
class RolloutTruth:
    """Ground truth of a rendered rollout (hidden from annotators)."""

    defects: tuple[DefectWindow, ...]
    subgoals_completed: int
    frame_count: int
    fps: int

    @property
    def duration_s(self) -> float:
        return self.frame_count / self.fps

    def to_json(self) -> dict[str, Any]:
        return {
            "defects": [d.to_json() for d in self.defects],
            "subgoals_completed": self.subgoals_completed,
        }
