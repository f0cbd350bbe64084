"""The case-folder format (``case.json``), validated with field-level messages.

See docs/case-format.md for the documented layout. Unknown keys are errors, so a typo such as
``"clutter_lvl"`` is reported instead of silently ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from annotation import UserError
from storage._records import Clutter, Domain, Role

FORMAT = "rollout-workbench/case@1"
CASE_FILE = "case.json"


class CaseImportError(UserError, ValueError):
    """A case folder that cannot be imported; the message names the file and the problem."""


class VideoEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    role: Role
    model: str | None = None
    seed: int | None = None
    demo_truth: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _generated_needs_model(self) -> VideoEntry:
        if self.role is Role.GENERATED and not self.model:
            raise ValueError("a generated video needs 'model'")
        if self.role is not Role.GENERATED and (self.model or self.seed is not None):
            raise ValueError("only generated videos carry 'model' and 'seed'")
        return self


class CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["rollout-workbench/case@1"] = "rollout-workbench/case@1"
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,80}$")
    goal: str = Field(min_length=1)
    domain: Domain
    clutter: Clutter
    initial_image: str
    videos: list[VideoEntry] = Field(min_length=1)
    object_list: list[str] = []
    colors: list[str] = []
    object_families: list[str] = []
    involved_objects: list[str] = []
    materials: list[str] = []
    action_types: list[str] = []
    notes: str = ""

    def extra_fields(self) -> dict[str, Any]:
        keep = ("object_list", "colors", "object_families", "involved_objects", "materials")
        out: dict[str, Any] = {
            k: getattr(self, k) for k in (*keep, "action_types") if getattr(self, k)
        }
        if self.notes:
            out["notes"] = self.notes
        return out


def read_case_file(folder: Path) -> CaseFile:
    """Parse and validate ``folder/case.json``."""
    path = folder / CASE_FILE
    if not path.is_file():
        raise CaseImportError(f"{folder}: no {CASE_FILE} (not a case folder)")
    try:
        data = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as e:
        raise CaseImportError(f"{path}: line {e.lineno} column {e.colno}: {e.msg}") from None
    except UnicodeDecodeError:
        raise CaseImportError(f"{path}: not UTF-8 text") from None
    if not isinstance(data, dict):
        raise CaseImportError(f"{path}: expected a JSON object at the top level")
    try:
        return CaseFile.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        msg = first["msg"]
        if first["type"] == "extra_forbidden":
            msg = "unknown field"
        elif first["type"] == "missing":
            msg = "missing field"
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        raise CaseImportError(f"{path}: field '{loc}': {msg}{more}") from None
