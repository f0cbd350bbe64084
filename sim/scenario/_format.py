"""Scenario files: one task in one world, validated before anything runs.

A scenario names a scene family, a seeded initial layout, the goal as a task contract, the
error-free reference (the commands the scripted agent says), the tick length Δ, budgets and an
optional hidden anomaly schedule. Format (JSON, ``"format": "workbench-scenario/1"``) is
documented in ``docs/scenario-format.md``. Every problem is reported with the file and the
field path (``layout.objects[2].id``), or the line for malformed JSON.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from annotation import UserError
from storage import ARM_REF

FORMAT = "workbench-scenario/1"


class ScenarioError(UserError, ValueError):
    """A scenario file that cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ObjectPlacement(_Strict):
    id: str
    region: tuple[float, float, float, float] | None = None
    at: tuple[float, float] | None = None
    on: str | None = None
    inside: str | None = Field(default=None, alias="in")
    yaw: tuple[float, float] = (0.0, 0.0)

    @field_validator("region")
    @classmethod
    def _ordered(
        cls, v: tuple[float, float, float, float] | None
    ) -> tuple[float, float, float, float] | None:
        if v is not None and (v[0] > v[1] or v[2] > v[3]):
            raise ValueError("region is [xmin, xmax, ymin, ymax] with min ≤ max")
        return v


class LayoutSpec(_Strict):
    objects: tuple[ObjectPlacement, ...]
    attrs: dict[str, dict[str, float | bool | str]] = {}
    min_gap: float = Field(default=0.03, ge=0.0, le=0.3)


class WaitUntil(_Strict):
    wait_until: dict[str, Any]
    max_ticks: int = Field(default=600, ge=1)


class Budgets(_Strict):
    max_ticks: int = Field(default=1500, ge=1, le=100_000)
    max_attempts: int = Field(default=100, ge=1)
    max_consecutive_rejections: int = Field(default=10, ge=1)


class AnomalySpec(_Strict):
    kind: Literal["displace", "flip", "remove", "drift"]
    obj: str
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    velocity: tuple[float, float] = (0.0, 0.0)
    axis: Literal["x", "y"] = "x"
    at_tick: int | None = Field(default=None, ge=0)
    when: dict[str, Any] | None = None


class Scenario(_Strict):
    format: Literal["workbench-scenario/1"] = "workbench-scenario/1"
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str
    family: Literal["kitchen", "tidy", "stack"]
    instruction: str
    delta: float = Field(default=0.1, gt=0.0, le=2.0)
    seed: int = 0
    layout: LayoutSpec
    goal: dict[str, Any]
    reference: tuple[str | WaitUntil, ...]
    budgets: Budgets = Budgets()
    anomalies: tuple[AnomalySpec, ...] = ()
    #: the arm it runs with unless the command says otherwise (``--arm``): a shipped arm or an
    #: arm profile of the project it runs in (``NAME`` or ``NAME@VERSION``)
    arm: str | None = None
    notes: str = ""

    @field_validator("delta")
    @classmethod
    def _whole_steps(cls, v: float) -> float:
        if abs(round(v / 0.01) * 0.01 - v) > 1e-9:
            raise ValueError("must be a multiple of 0.01 s (whole physics steps)")
        return v

    @field_validator("arm")
    @classmethod
    def _arm_name(cls, v: str | None) -> str | None:
        # which arms exist is known only where it runs (a project's profiles): the name's form
        # is checked here, the arm itself when the episode starts (naming this file and field)
        if v is not None and not ARM_REF.match(v):
            raise ValueError(
                "must name a shipped arm (wb6, lab7) or an arm profile: letters, digits, "
                "'_', '-', '.', optionally @VERSION (e.g. 'ur-lab' or 'ur-lab@2')"
            )
        return v

    @property
    def digest(self) -> str:
        # a scenario without an arm digests as it did before the field existed, so episodes
        # recorded then still match their file
        exclude = {"arm"} if self.arm is None else set()
        dumped = self.model_dump(mode="json", by_alias=True, exclude=exclude)
        blob = json.dumps(dumped, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


def parse_scenario(text: str, *, source: str = "<scenario>") -> Scenario:
    """Parse and validate the structure (objects and predicates are checked by ``bind``)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{source}: line {e.lineno} column {e.colno}: {e.msg}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a JSON object")
    if data.get("format", FORMAT) != FORMAT:
        raise ScenarioError(
            f"{source}: format {data.get('format')!r} is not {FORMAT!r} (newer workbench?)"
        )
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        # the most specific error: for "str or object" fields that is the object's own problem
        first = max(e.errors(), key=lambda err: len(err["loc"]))
        where = _path(first["loc"], data, first["type"])
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        raise ScenarioError(f"{source}: {where}: {_message(first)}{more}") from None


def load_scenario(path: Path) -> Scenario:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read ({e.strerror})") from None
    return parse_scenario(text, source=str(path))


def _path(loc: tuple[int | str, ...], data: Any, kind: str) -> str:
    """The field path of an error in the user's terms, e.g. ``layout.objects[2].region``.

    pydantic's locations also name the union member it tried (``str``, ``WaitUntil``, …); only
    the parts that walk the document are kept, plus the key a missing/unknown-field error names.
    """
    out, cur = "", data
    named = kind in ("missing", "extra_forbidden")
    for n, part in enumerate(loc):
        if isinstance(cur, list) and isinstance(part, int) and part < len(cur):
            out, cur = out + f"[{part}]", cur[part]
        elif isinstance(cur, dict) and (part in cur or (named and n == len(loc) - 1)):
            out, cur = out + ("." if out else "") + str(part), cur.get(part)
    return out or "(top level)"


def _message(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown field"
    if err["type"] == "missing":
        return "required field is missing"
    return str(err["msg"])
