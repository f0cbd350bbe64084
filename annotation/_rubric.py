"""The rubric as data: gates, questions and examples, loaded from ``resources/rubrics``.

The wording lives in a JSON file so annotators' help text, the GUI gate panel and (later) the
judge prompts all read the same source. Nothing here knows about storage or Qt.
"""

from __future__ import annotations

import json
from enum import StrEnum
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict


class Axis(StrEnum):
    """The two scoring axes."""

    TASK = "task"
    PHYSICS = "physics"


class Gate(BaseModel):
    """One yes/no question asked of a subgoal, in order, with early exit."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    question: str
    level_on_fail: int
    allows_na: bool = False
    pass_examples: tuple[str, ...] = ()
    fail_examples: tuple[str, ...] = ()
    na_hint: str = ""


class AxisRubric(BaseModel):
    """The gates of one axis and the help text shown next to them."""

    model_config = ConfigDict(frozen=True)

    axis: Axis
    title: str
    max_level: int
    summary: str
    tolerance: str
    gates: tuple[Gate, ...]


class Rubric(BaseModel):
    """A versioned rubric: Task gates and Physics gates."""

    model_config = ConfigDict(frozen=True)

    id: str
    version: int
    title: str
    axes: tuple[AxisRubric, ...]

    def axis(self, axis: Axis) -> AxisRubric:
        """Return the rubric of one axis."""
        for a in self.axes:
            if a.axis == axis:
                return a
        raise KeyError(axis)

    def gate(self, gate_id: str) -> Gate:
        """Return a gate by id (``T1`` ... ``P4``)."""
        for a in self.axes:
            for g in a.gates:
                if g.id == gate_id:
                    return g
        raise KeyError(gate_id)

    @property
    def task_gates(self) -> tuple[str, ...]:
        return tuple(g.id for g in self.axis(Axis.TASK).gates)

    @property
    def physics_gates(self) -> tuple[str, ...]:
        return tuple(g.id for g in self.axis(Axis.PHYSICS).gates)


@cache
def load_rubric(name: str = "ego2act-v1") -> Rubric:
    """Load a rubric shipped in ``resources/rubrics/<name>.json``."""
    text = resources.files("resources.rubrics").joinpath(f"{name}.json").read_text("utf-8")
    return Rubric.model_validate(json.loads(text))
