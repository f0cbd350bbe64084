"""Frozen, typed records: the contract between the database, workers and the GUI.

Rows are turned into records at the repository boundary; nothing above ``storage`` sees a raw
row. ``VERSION`` changes when a record's meaning changes, together with a schema migration.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """Base of stored records: immutable, typed, versioned."""

    model_config = ConfigDict(frozen=True)
    VERSION: ClassVar[int] = 1


class Domain(StrEnum):
    KITCHEN = "kitchen_food_prep"
    HOUSEHOLD = "household_org_storage"
    OFFICE = "office_study_workspace"
    PERSONAL_CARE = "personal_care_utilities"
    OTHERS = "others"


class Clutter(StrEnum):
    NONE = "none"
    MINIMAL = "minimal"
    HEAVY = "heavy"


class Role(StrEnum):
    GENERATED = "generated"
    HUMAN_SUCCESS = "human-success"
    HUMAN_FAILURE = "human-failure"


# The stored role of a video in a rater project (the column is required): none, read as None.
NO_ROLE = ""


class Case(Record):
    id: str
    goal: str
    domain: Domain
    clutter: Clutter
    initial_image: str  # media sha256


class Video(Record):
    """A video of a case. ``id`` is the anonymous id raters see; the rest is hidden from them."""

    id: str
    case_id: str
    media: str
    role: Role | None  # None in a rater project: roles stay in the lead's project
    model: str | None
    seed: int | None
    source_name: str


class Rater(Record):
    id: str
    name: str


class Subgoal(Record):
    """One atomic subgoal of a rater's plan for a case (spec §2.2)."""

    id: int
    plan_id: int
    position: int  # 1-based; shown as S1, S2, ...
    source: str
    target: str | None
    action: str
    end_state: str
    requires: tuple[int, ...]
    reason: str
    enabling: bool

    @property
    def label(self) -> str:
        return f"S{self.position}"


class EvidenceMark(Record):
    """A frame range (optionally a box) that supports a gate decision."""

    id: int
    rating_id: int
    subgoal_id: int | None
    gate: str | None
    start_frame: int
    end_frame: int
    box: tuple[float, float, float, float] | None  # x, y, w, h in 0..1
    note: str


class GateEvidence(Record):
    """An evidence mark with where it sits in the rubric: what the episode view shows of the
    annotation of one of its videos (matched by content)."""

    video_id: str
    rater_id: str
    subgoal: str | None  # "S2"; None when the mark is tied to no subgoal
    gate: str | None
    start_frame: int
    end_frame: int
    note: str
    answer: str | None  # the rater's answer at that gate for that subgoal, if given


class Rating(Record):
    """One rater's work on one video."""

    id: int
    video_id: str
    rater_id: str
    holistic_task: float | None
    holistic_physics: float | None
