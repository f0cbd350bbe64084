"""The offline bundle file (``.wbz``): one zip that carries a study between machines.

Layout: ``manifest.json`` plus the members it lists. The manifest names the format
(``rollout-workbench/bundle@1``), the kind (``assignment`` lead → rater, ``work`` rater → lead),
the writer's schema version, the lead project's id, the study and the rater, and the sha256 of
every other member; a ``digest`` over the manifest itself catches hand edits to it. Reading a
bundle checks all of that before anything is used, so a truncated, damaged, edited, foreign or
too-new bundle is refused with a message naming the file, and the project stays as it was.

The hashes are integrity checks, not signatures: they catch accidents and casual edits, not a
determined forger (who could rewrite the hashes too). Members carry a fixed timestamp so the
archive reveals nothing about the lead's files (not even their modification times).

A bundle comes from another machine, so it is hostile until checked: its members are sized
up from the zip's directory before anything is read, and read bounded (:mod:`._members`).
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from annotation import GATES_ALL, Answer, UserError
from storage._records import Clutter, Domain
from storage.bundles._members import check_members, copy_hashing, member_limit, read_json
from storage.guard import LimitError
from storage.media import file_sha256

FORMAT = "rollout-workbench/bundle@1"
_FORMAT_PREFIX = "rollout-workbench/bundle@"
MANIFEST = "manifest.json"
PAYLOAD = "payload.json"
_EPOCH = (1980, 1, 1, 0, 0, 0)

Kind = Literal["assignment", "work"]
_SAFE_ID = r"^[A-Za-z0-9_.-]{1,80}$"
M = TypeVar("M", bound=BaseModel)


class BundleError(UserError, ValueError):
    """A bundle that cannot be used; the message names the file. Nothing was changed."""


class Manifest(BaseModel):
    model_config = ConfigDict(frozen=True)

    format: str
    kind: Kind
    schema_version: int
    project_id: str
    study_id: str
    rater_id: str
    created_at: str
    files: dict[str, str]
    digest: str = ""


def _digest(fields: dict[str, Any]) -> str:
    body = {k: v for k, v in fields.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


class BundleWriter:
    """Writes a bundle to ``out`` atomically: a ``.partial`` file renamed when complete."""

    def __init__(self, out: Path, zf: zipfile.ZipFile) -> None:
        self.out = out
        self._zf = zf
        self.files: dict[str, str] = {}

    def add_json(self, name: str, data: Any) -> None:
        raw = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False).encode()
        info = zipfile.ZipInfo(name, _EPOCH)
        info.compress_type = zipfile.ZIP_DEFLATED
        self._zf.writestr(info, raw)
        self.files[name] = hashlib.sha256(raw).hexdigest()

    def add_file(self, name: str, src: Path) -> None:
        # Media are already compressed: store them, and stream so big videos never sit in memory.
        info = zipfile.ZipInfo(name, _EPOCH)
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = src.stat().st_size
        with src.open("rb") as f, self._zf.open(info, "w", force_zip64=True) as dst:
            self.files[name] = copy_hashing(f, dst)


@contextmanager
def write_bundle(
    out: Path,
    *,
    kind: Kind,
    schema_version: int,
    project_id: str,
    study_id: str,
    rater_id: str,
    created_at: str,
) -> Iterator[BundleWriter]:
    """Collect members in the ``with`` block; the manifest is written last, then renamed."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".partial")
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            w = BundleWriter(out, zf)
            yield w
            fields: dict[str, Any] = {
                "format": FORMAT,
                "kind": kind,
                "schema_version": schema_version,
                "project_id": project_id,
                "study_id": study_id,
                "rater_id": rater_id,
                "created_at": created_at,
                "files": w.files,
            }
            fields["digest"] = _digest(fields)
            w.add_json(MANIFEST, fields)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


class Bundle:
    """A verified, open bundle (see :func:`read_bundle`)."""

    def __init__(self, path: Path, zf: zipfile.ZipFile, manifest: Manifest, sha256: str) -> None:
        self.path = path
        self.manifest = manifest
        self.sha256 = sha256  # of the whole file: importing it twice is recognised
        self._zf = zf

    def payload(self, model: type[M]) -> M:
        """The payload member, validated against ``model``."""
        try:
            data = read_json(self.path, self._zf, PAYLOAD)
            return model.model_validate(data)
        except LimitError:
            raise
        except ValidationError as e:
            first = e.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise BundleError(f"{self.path}: {PAYLOAD}: field '{loc}': {first['msg']}") from None
        except (ValueError, KeyError) as e:
            raise BundleError(f"{self.path}: {PAYLOAD} is not valid: {e}") from None

    def extract(self, name: str, dest: Path) -> None:
        """Copy one member to ``dest`` (streamed)."""
        with self._zf.open(name) as src, dest.open("wb") as out:
            copy_hashing(src, out, member_limit(name), f"{self.path}: {name}")


def _damaged(path: Path, why: object) -> BundleError:
    return BundleError(f"{path}: bundle is truncated or damaged ({why}); export it again")


@contextmanager
def read_bundle(path: Path, *, kind: Kind, schema_version: int) -> Iterator[Bundle]:
    """Open and verify a bundle of ``kind`` written by a schema no newer than ours."""
    path = Path(path)
    if not path.is_file():
        raise BundleError(f"{path}: no such bundle file")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise _damaged(path, e) from None
    with zf:
        check_members(path, zf)
        manifest = _read_manifest(path, zf, schema_version)
        if manifest.kind != kind:
            names = {"assignment": "an assignment bundle", "work": "a work bundle"}
            raise BundleError(f"{path}: this is {names[manifest.kind]}, not {names[kind]}")
        members = set(zf.namelist()) - {MANIFEST}
        missing = sorted(set(manifest.files) - members)
        extra = sorted(members - set(manifest.files))
        if missing:
            raise _damaged(path, f"missing {missing[0]}")
        if extra:
            raise BundleError(f"{path}: has been modified since it was exported (added {extra[0]})")
        for name, want in sorted(manifest.files.items()):
            try:
                with zf.open(name) as f:
                    got = copy_hashing(f, None, member_limit(name), f"{path}: {name}")
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as e:
                raise _damaged(path, f"{name}: {e}") from None
            if got != want:
                raise BundleError(
                    f"{path}: has been modified since it was exported ({name} differs)"
                )
        yield Bundle(path, zf, manifest, file_sha256(path))


def _read_manifest(path: Path, zf: zipfile.ZipFile, schema_version: int) -> Manifest:
    try:
        data = read_json(path, zf, MANIFEST)
    except LimitError:
        raise
    except KeyError:
        raise BundleError(f"{path}: not a workbench bundle (no {MANIFEST})") from None
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as e:
        raise _damaged(path, e) from None
    except ValueError:
        raise BundleError(f"{path}: {MANIFEST} is not valid JSON") from None
    fmt = data.get("format") if isinstance(data, dict) else None
    if not isinstance(fmt, str) or not fmt.startswith(_FORMAT_PREFIX):
        raise BundleError(f"{path}: not a workbench bundle (unknown format {fmt!r})")
    if fmt != FORMAT:
        raise BundleError(
            f"{path}: made by a newer workbench (bundle format {fmt!r}; this workbench reads "
            f"{FORMAT!r}); update the workbench"
        )
    version = data.get("schema_version")
    if isinstance(version, int) and version > schema_version:
        raise BundleError(
            f"{path}: made by a newer workbench (schema v{version}; this workbench supports "
            f"up to v{schema_version}); update the workbench to read it"
        )
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as e:
        loc = ".".join(str(p) for p in e.errors()[0]["loc"])
        raise BundleError(f"{path}: {MANIFEST}: field '{loc}' is missing or invalid") from None
    if manifest.digest != _digest(data):
        raise BundleError(f"{path}: has been modified since it was exported ({MANIFEST} edited)")
    return manifest


# ---- payloads ---------------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BundleCase(_Strict):
    """A case as a rater sees it: an opaque token, the goal, the scene; nothing else."""

    token: str = Field(pattern=r"^C-[0-9A-F]{8}$")
    goal: str
    domain: Domain
    clutter: Clutter
    image: str  # member name, images/<token>.<ext>


class BundleItem(_Strict):
    position: int = Field(ge=1)
    video: str = Field(pattern=_SAFE_ID)
    case: str
    file: str  # member name, videos/<video id>.<ext>
    calibration: bool


class AssignmentPayload(_Strict):
    """What a rater gets: their videos in their order, with the cases' goals and scenes."""

    rater_name: str
    cases: list[BundleCase]
    items: list[BundleItem]

    @model_validator(mode="after")
    def _consistent(self) -> AssignmentPayload:
        tokens = {c.token for c in self.cases}
        for item in self.items:
            if item.case not in tokens:
                raise ValueError(f"item {item.position} refers to unknown case {item.case}")
        if len({i.video for i in self.items}) != len(self.items):
            raise ValueError("a video is listed twice")
        return self


class WorkSubgoal(_Strict):
    source: str
    target: str | None = None
    action: str
    end_state: str = ""
    requires: list[int] = []  # positions of earlier subgoals (ids differ between projects)
    reason: str = ""
    enabling: bool = False


class WorkGate(_Strict):
    subgoal: int = Field(ge=1)  # position in the case's plan
    gate: str
    answer: Answer
    note: str = ""
    updated_at: str | None = None

    @model_validator(mode="after")
    def _valid(self) -> WorkGate:
        if self.gate not in GATES_ALL:
            raise ValueError(f"unknown gate {self.gate!r}")
        if self.answer is Answer.NA and self.gate != "P1":
            raise ValueError(f"N/A is allowed only at P1, not at {self.gate}")
        return self


class WorkEvidence(_Strict):
    subgoal: int | None = Field(None, ge=1)
    gate: str | None = None
    start_frame: int = Field(ge=0)
    end_frame: int = Field(ge=0)
    box: tuple[float, float, float, float] | None = None
    note: str = ""

    @model_validator(mode="after")
    def _valid(self) -> WorkEvidence:
        if self.end_frame < self.start_frame:
            raise ValueError(f"frames {self.start_frame}–{self.end_frame} are not a range")
        if self.gate is not None and self.gate not in GATES_ALL:
            raise ValueError(f"unknown gate {self.gate!r}")
        if self.box is not None and not all(0.0 <= v <= 1.0 for v in self.box):
            raise ValueError("evidence box must lie inside the frame (0..1)")
        return self


class WorkVideo(_Strict):
    case: str
    updated_at: str | None = None
    holistic_task: float | None = Field(None, ge=0, le=3)
    holistic_physics: float | None = Field(None, ge=0, le=4)
    gates: list[WorkGate] = []
    evidence: list[WorkEvidence] = []


class WorkPayload(_Strict):
    """A rater's work: plans per case, and per video gate decisions, evidence and holistic."""

    export_id: str = ""  # unique per export
    ancestors: list[str] = []  # earlier exports of the same rater project: tells copies apart
    plans: dict[str, list[WorkSubgoal]] = {}
    videos: dict[str, WorkVideo] = {}

    @model_validator(mode="after")
    def _consistent(self) -> WorkPayload:
        for case, plan in self.plans.items():
            for pos, sg in enumerate(plan, start=1):
                if any(not 1 <= r < pos for r in sg.requires):
                    raise ValueError(f"plan {case} S{pos} requires a subgoal that is not earlier")
        for vid, v in self.videos.items():
            n = len(self.plans.get(v.case, []))
            seen = set()
            for g in v.gates:
                if g.subgoal > n or (g.subgoal, g.gate) in seen:
                    raise ValueError(f"{vid}: {g.gate} for S{g.subgoal} does not fit the plan")
                seen.add((g.subgoal, g.gate))
            if any(e.subgoal is not None and e.subgoal > n for e in v.evidence):
                raise ValueError(f"{vid}: evidence for a subgoal beyond the plan")
        return self
