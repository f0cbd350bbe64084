"""Arm profiles: a lab's own arm, copied into the project by content, with its check report.

A profile version is the arm's MJCF and every file it references (includes, meshes, textures),
copied into ``arms/<digest>/`` with their layout kept, where ``digest`` is a sha256 over each
file's relative path and sha256: the folder's name says what is in it, two versions with the
same files share it, and :meth:`ArmProfiles.verify` tells a file edited in the project apart
from the one the version was made with. The row (``arm_profiles``, schema v10) keeps the names
the controller needs, the measured home posture, joint limits and gripper range, and the whole
check report.

Versions are never changed (a trigger refuses an UPDATE): adding a name again makes the next
version, and episodes name the version they ran with (``ur-lab@2``), so an episode always
replays on the files it ran with. A version an episode used cannot be removed.

Storage copies and records. Which files an MJCF references and whether the arm works is decided
by ``sim`` (with MuJoCo) on the staged copy, before :meth:`ArmProfiles.add` makes it part of the
project: a refused or failed add leaves the project as it was.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from annotation import UserError
from storage._db import write
from storage._history import now
from storage.guard import LIMITS, check_size, inside

if TYPE_CHECKING:
    from storage._project import Project

ARMS_DIR = "arms"
#: a profile name: what `--arm` and a scenario's ``arm`` accept, besides the shipped arms
ARM_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
#: a reference to a profile: its name (the latest version) or ``NAME@VERSION``
ARM_REF = re.compile(rf"^({ARM_NAME})(?:@([1-9][0-9]{{0,8}}))?$")
_CHUNK = 1 << 20
_MAX_FILE = max(LIMITS.mesh_bytes, LIMITS.mjcf_bytes)  # an arm's mesh, texture or XML file


class ArmProfileError(UserError, ValueError):
    """An arm profile that does not exist, cannot be added or removed, or whose files changed."""


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def files_digest(files: Mapping[str, str]) -> str:
    """The digest of a set of files: sha256 over ``<sha256>  <relative path>`` lines, by path.

    Paths are part of it because MuJoCo finds a mesh by its path: the same bytes laid out
    differently are a different arm.
    """
    lines = "".join(f"{sha}  {rel}\n" for rel, sha in sorted(files.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def tree_digest(root: Path, rels: Sequence[str]) -> tuple[str, dict[str, str]]:
    """The digest of ``rels`` (relative to ``root``) and each file's sha256."""
    files = {rel: file_digest(root / rel) for rel in rels}
    return files_digest(files), files


@dataclass(frozen=True)
class ArmProfile:
    """One stored version of a lab's arm (a row of ``arm_profiles``)."""

    name: str
    version: int
    digest: str  # over every copied file; also the folder's name under arms/
    mjcf: str  # the arm's MJCF, relative to the folder
    files: dict[str, str]  # relative path -> sha256, every copied file
    source: str  # the file the user added
    ee_site: str
    arm_joints: tuple[str, ...]
    gripper_actuators: tuple[str, ...]
    home: tuple[float, ...]  # the posture the controller starts from, one value per joint
    limits: dict[str, list[float] | None]  # joint -> [low, high] (None: unlimited)
    gripper_range: dict[str, Any]  # what the check measured (jaw gap open and closed)
    report: dict[str, Any]  # the check report, whole
    created: str

    @property
    def label(self) -> str:
        """How episodes and listings name this version: ``NAME@VERSION``."""
        return f"{self.name}@{self.version}"

    @property
    def folder(self) -> str:
        """The files' folder, relative to the project root."""
        return f"{ARMS_DIR}/{self.digest}"


@dataclass(frozen=True)
class StagedArm:
    """Files copied into a hidden folder of the project, not yet part of it."""

    root: Path
    mjcf: Path  # the copied MJCF: what the check runs on
    files: dict[str, str]
    digest: str


_COLUMNS = (
    "name, version, digest, mjcf, files_json, source, ee_site, arm_joints_json, gripper_json, "
    "home_json, limits_json, gripper_range_json, report_json, created"
)


def _profile(row: Sequence[Any]) -> ArmProfile:
    (name, version, digest, mjcf, files, source, ee_site, joints, gripper, home, limits,
     gripper_range, report, created) = row  # fmt: skip
    return ArmProfile(
        name=str(name), version=int(version), digest=str(digest), mjcf=str(mjcf),
        files=dict(json.loads(files)), source=str(source), ee_site=str(ee_site),
        arm_joints=tuple(json.loads(joints)), gripper_actuators=tuple(json.loads(gripper)),
        home=tuple(float(v) for v in json.loads(home)), limits=dict(json.loads(limits)),
        gripper_range=dict(json.loads(gripper_range)), report=dict(json.loads(report)),
        created=str(created),
    )  # fmt: skip


def _json(value: Any, what: str) -> str:
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ArmProfileError(f"{what}: cannot be stored ({err})") from None


def parse_arm_ref(ref: str, *, field: str = "arm") -> tuple[str, int | None]:
    """``NAME`` or ``NAME@VERSION`` -> (name, version or None)."""
    m = ARM_REF.match(ref) if isinstance(ref, str) else None
    if m is None:
        raise ArmProfileError(
            f"{field}: {ref!r} is not an arm profile name (letters, digits, '_', '-', '.', "
            "optionally @VERSION, e.g. 'ur-lab' or 'ur-lab@2')"
        )
    return m.group(1), None if m.group(2) is None else int(m.group(2))


def _identity(p: ArmProfile) -> tuple[str, str, str, tuple[str, ...], tuple[str, ...]]:
    """What makes two versions the same arm: the files and the names (the measurements follow)."""
    return (p.digest, p.mjcf, p.ee_site, p.arm_joints, p.gripper_actuators)


def _safe_rel(rel: str) -> str:
    p = PurePosixPath(rel)
    if p.is_absolute() or not p.parts or ".." in p.parts:
        raise ArmProfileError(f"{rel!r}: an arm file must lie inside the folder copied")
    return p.as_posix()


class ArmProfiles:
    """Add, read, list, verify and remove the project's arm profiles."""

    def __init__(self, project: Project) -> None:
        # The project: rows in its database, files under its root, users among its episodes.
        self._project = project
        self._db = project.db

    @property
    def folder(self) -> Path:
        return self._project.root / ARMS_DIR

    # ---- adding -------------------------------------------------------------------------
    @contextmanager
    def stage(self, source_root: Path, files: Sequence[str], mjcf: str) -> Iterator[StagedArm]:
        """Copy ``files`` (relative to ``source_root``; ``mjcf`` among them) into a hidden
        folder of the project; it is removed on leaving the block unless :meth:`add` took it."""
        rels = sorted({_safe_rel(f) for f in files})
        main = _safe_rel(mjcf)
        if main not in rels:
            raise ArmProfileError(f"{mjcf!r}: the MJCF is not among the files to copy")
        self.folder.mkdir(exist_ok=True)
        staging = self.folder / f".staging-{uuid.uuid4().hex[:12]}"
        staging.mkdir()
        try:
            for rel in rels:  # each checked again here: storage copies nothing from outside
                src = inside(source_root, rel, what="arm file", source=mjcf)
                dst = staging / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                try:
                    check_size(src.stat().st_size, _MAX_FILE, source=src, field="arm file")
                    shutil.copyfile(src, dst)
                except OSError as err:
                    raise ArmProfileError(f"{src}: cannot be copied ({err.strerror})") from None
            digest, hashes = tree_digest(staging, rels)
            yield StagedArm(staging, staging / main, hashes, digest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def add(
        self,
        staged: StagedArm,
        *,
        name: str,
        source: str,
        ee_site: str,
        arm_joints: Sequence[str],
        gripper_actuators: Sequence[str],
        home: Sequence[float],
        limits: Mapping[str, Sequence[float] | None],
        gripper_range: Mapping[str, Any],
        report: Mapping[str, Any],
    ) -> tuple[ArmProfile, bool]:
        """Store the staged files as the next version of ``name``; returns it and whether it
        is new. Adding what the latest version already is (same files, same names) adds
        nothing and returns that version.
        """
        parse_arm_ref(name, field="name")
        if "@" in name:
            raise ArmProfileError(f"name: {name!r}: a version is given by the project, not '@'")
        mjcf = staged.mjcf.relative_to(staged.root).as_posix()
        row: dict[str, str | int] = {
            "name": name, "digest": staged.digest, "mjcf": mjcf,
            "files_json": _json(staged.files, "files"), "source": source, "ee_site": ee_site,
            "arm_joints_json": _json(list(arm_joints), "arm joints"),
            "gripper_json": _json(list(gripper_actuators), "gripper actuators"),
            "home_json": _json([float(v) for v in home], "home posture"),
            "limits_json": _json(
                {k: None if v is None else [float(x) for x in v] for k, v in limits.items()},
                "joint limits",
            ),
            "gripper_range_json": _json(dict(gripper_range), "gripper range"),
            "report_json": _json(dict(report), "check report"), "created": now(),
        }  # fmt: skip
        final = self.folder / staged.digest
        made = False
        try:
            with write(self._db):
                latest = self._latest(name)
                same = (staged.digest, mjcf, ee_site, tuple(arm_joints), tuple(gripper_actuators))
                if latest is not None and _identity(latest) == same:
                    self._place(staged, final)  # puts back files edited in the project
                    return latest, False
                (top,) = self._db.execute(
                    "SELECT COALESCE(MAX(version), 0) FROM arm_profiles WHERE name = ?", [name]
                ).fetchone()
                row["version"] = int(top) + 1
                cols = ", ".join(row)
                self._db.execute(
                    f"INSERT INTO arm_profiles ({cols}) VALUES ({', '.join('?' * len(row))})",
                    list(row.values()),
                )
                made = self._place(staged, final)
            return self.get(f"{name}@{row['version']}"), True
        except BaseException:
            if made:
                shutil.rmtree(final, ignore_errors=True)
            raise

    def _place(self, staged: StagedArm, final: Path) -> bool:
        """Move the staged folder to ``final``; True if this call created it."""
        if final.is_dir():
            if self._damage(final, staged.files) is None:
                return False  # the same files are already here (another name or version)
            # edited in place since: these are the bytes the digest names, so put them back
            aside = final.with_name(f".damaged-{final.name}-{uuid.uuid4().hex[:8]}")
            os.rename(final, aside)
            shutil.rmtree(aside, ignore_errors=True)
        os.rename(staged.root, final)
        return True

    # ---- reading ------------------------------------------------------------------------
    def get(self, ref: str, *, field: str = "arm") -> ArmProfile:
        """The version ``ref`` names: ``NAME`` (the latest) or ``NAME@VERSION``."""
        name, version = parse_arm_ref(ref, field=field)
        if version is None:
            found = self._latest(name)
        else:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM arm_profiles WHERE name = ? AND version = ?",
                [name, version],
            ).fetchone()
            found = None if row is None else _profile(row)
        if found is not None:
            return found
        versions = self.versions(name)
        if versions:
            have = ", ".join(p.label for p in versions)
            raise ArmProfileError(f"{field}: arm {name!r} has no version {version} ({have})")
        names = self.names()
        listing = ", ".join(names) if names else "none yet; add one with `workbench arm add`"
        raise ArmProfileError(f"{field}: no arm profile {name!r} in this project ({listing})")

    def _latest(self, name: str) -> ArmProfile | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM arm_profiles WHERE name = ? ORDER BY version DESC LIMIT 1",
            [name],
        ).fetchone()
        return None if row is None else _profile(row)

    def versions(self, name: str) -> builtins.list[ArmProfile]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM arm_profiles WHERE name = ? ORDER BY version", [name]
        ).fetchall()
        return [_profile(r) for r in rows]

    def list(self) -> builtins.list[ArmProfile]:
        """Every version, by name then version."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM arm_profiles ORDER BY name, version"
        ).fetchall()
        return [_profile(r) for r in rows]

    def names(self) -> builtins.list[str]:
        rows = self._db.execute("SELECT DISTINCT name FROM arm_profiles ORDER BY name")
        return [str(r[0]) for r in rows.fetchall()]

    def mjcf_path(self, profile: ArmProfile) -> Path:
        """The copied MJCF of ``profile`` (the file every world of it loads)."""
        return self._project.root / profile.folder / profile.mjcf

    def verify(self, profile: ArmProfile) -> None:
        """Raise ArmProfileError unless the copied files are the ones the version was made of."""
        folder = self._project.root / profile.folder
        problem = self._damage(folder, profile.files)
        if problem is not None:
            raise ArmProfileError(f"arm {profile.label}: {problem}")

    @staticmethod
    def _damage(folder: Path, files: Mapping[str, str]) -> str | None:
        for rel, want in sorted(files.items()):
            path = folder / rel
            try:
                got = file_digest(path)
            except FileNotFoundError:
                return f"{path} is missing"
            except OSError as err:
                return f"{path} cannot be read ({err.strerror})"
            if got != want:
                return (
                    f"{path} changed since the profile was added (sha256 {got[:12]}…, "
                    f"recorded {want[:12]}…)"
                )
        return None

    # ---- who uses what, removing --------------------------------------------------------
    def users(self, profiles: Sequence[ArmProfile]) -> dict[str, builtins.list[str]]:
        """Label -> ids of the episodes that ran with that version (by the label they
        recorded)."""
        labels = [p.label for p in profiles]
        out: dict[str, builtins.list[str]] = {label: [] for label in labels}
        if not labels:
            return out
        marks = ", ".join("?" * len(labels))
        rows = self._db.execute(
            f"SELECT json_extract(config_json, '$.arm'), id FROM sim_episodes "
            f"WHERE json_extract(config_json, '$.arm') IN ({marks}) ORDER BY started, id",
            labels,
        ).fetchall()
        for label, eid in rows:
            out[str(label)].append(str(eid))
        return out

    def remove(self, ref: str) -> builtins.list[ArmProfile]:
        """Remove ``NAME`` (every version) or ``NAME@VERSION``; refused, naming the episodes,
        if an episode ran with one of them. Returns what was removed."""
        name, version = parse_arm_ref(ref)
        with write(self._db):
            targets = self.versions(name) if version is None else [self.get(ref)]
            if not targets:
                self.get(ref)  # raises: no such profile, with the names there are
            used = {label: ids for label, ids in self.users(targets).items() if ids}
            if used:
                parts = []
                for label, ids in used.items():
                    shown = ", ".join(i[:8] for i in ids[:5]) + (", …" if len(ids) > 5 else "")
                    parts.append(f"{label} by {len(ids)} episode(s) ({shown})")
                raise ArmProfileError(
                    f"arm {ref!r} is used by recorded episodes, which replay on its files: "
                    f"{'; '.join(parts)}; a used version is kept (add a new version instead)"
                )
            for p in targets:
                self._db.execute(
                    "DELETE FROM arm_profiles WHERE name = ? AND version = ?", [p.name, p.version]
                )
            gone = {p.digest for p in targets}
            rows = self._db.execute("SELECT DISTINCT digest FROM arm_profiles").fetchall()
            kept = {str(r[0]) for r in rows}
        for digest in gone - kept:  # after the commit: a failed delete keeps the files
            shutil.rmtree(self.folder / digest, ignore_errors=True)
        return targets
