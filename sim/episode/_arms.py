"""Which arm an episode runs with: a shipped arm or one of the project's arm profiles.

:func:`resolve_arm` is the one place a name becomes an :class:`~sim.mujoco.ArmSpec`:
``wb6``/``lab7`` (the shipped files) or a profile of the project (``ur-lab`` is its latest
version, ``ur-lab@2`` that version), whose spec points at the copy in the project. Every arm
has a digest over its files (the shipped ones too), which episodes record beside the arm's
label; replaying, forking or reviewing an episode resolves its arm the same way and refuses if
the files are no longer the ones it ran with (:func:`episode_arm`).

:func:`add_arm` makes a profile: it copies the MJCF and what it references into the project
(:mod:`._arm_files`), runs the arm check on the copy, and stores the copy with the check's
measurements; a failing check stores nothing unless forced.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.episode._arm_files import arm_files, check_copy
from sim.scenario import BoundScenario
from storage import (
    ArmProfile,
    ArmProfileError,
    EpisodeError,
    EpisodeRecord,
    Project,
    parse_arm_ref,
    tree_digest,
)

if TYPE_CHECKING:
    from sim.mujoco import ArmReport, ArmSpec

ARMS = ("wb6", "lab7")  # the shipped arms: ours and a differently built 7-joint one
DEFAULT_ARM = "wb6"


@dataclass(frozen=True)
class ResolvedArm:
    """An arm ready to build a world with, and how episodes record it."""

    spec: ArmSpec
    label: str  # "wb6", or "ur-lab@2" for a profile version
    digest: str  # sha256 over the arm's files (storage.files_digest)


def shipped_spec(name: str) -> ArmSpec:
    from sim.mujoco import LAB7, WB6

    return {"wb6": WB6, "lab7": LAB7}[name]


@cache
def _shipped(name: str) -> ResolvedArm:
    spec = shipped_spec(name)
    found = arm_files(spec.mjcf)
    digest, _ = tree_digest(found.root, found.files)
    return ResolvedArm(spec, name, digest)


def resolve_arm(name: str, project: Project | None = None, *, where: str = "arm") -> ResolvedArm:
    """A shipped arm or a profile of ``project`` by name (``NAME`` or ``NAME@VERSION``).

    A profile's files are checked against its digest first: an arm edited in the project is
    refused, not run. ``where`` starts each error message (``--arm``, ``stack.json: arm``).
    """
    if name in ARMS:
        return _shipped(name)
    shipped = ", ".join(ARMS)
    try:
        parse_arm_ref(name, field=where)
    except ArmProfileError:
        raise ArmProfileError(
            f"{where}: {name!r} is neither a shipped arm ({shipped}) nor an arm profile name "
            "(letters, digits, '_', '-', '.', optionally @VERSION)"
        ) from None
    if project is None:
        raise ArmProfileError(
            f"{where}: {name!r} is not a shipped arm ({shipped}); arm profiles belong to a "
            "project, so this needs one (--project)"
        )
    if "@" not in name and not project.arms.versions(name):
        names = project.arms.names()
        have = ", ".join(names) if names else "none; add one with `workbench arm add`"
        raise ArmProfileError(
            f"{where}: no arm {name!r}: not a shipped arm ({shipped}) nor an arm profile of "
            f"this project ({have})"
        )
    profile = project.arms.get(name, field=where)
    project.arms.verify(profile)
    return ResolvedArm(profile_spec(project, profile), profile.label, profile.digest)


def profile_spec(project: Project, profile: ArmProfile) -> ArmSpec:
    from sim.mujoco import ArmSpec

    return ArmSpec(
        mjcf=project.arms.mjcf_path(profile),
        ee_site=profile.ee_site,
        arm_joints=profile.arm_joints,
        gripper_actuators=profile.gripper_actuators,
    )


def run_arm(arm: str | None, bound: BoundScenario, project: Project | None) -> ResolvedArm:
    """The arm a new episode runs with: ``arm`` if given, else the scenario's ``arm``, else
    the default."""
    if arm is not None:
        return resolve_arm(arm, project)
    if bound.scenario.arm is not None:
        return resolve_arm(bound.scenario.arm, project, where=f"{bound.source}: arm")
    return resolve_arm(DEFAULT_ARM)


def episode_arm(ep: EpisodeRecord, project: Project) -> ResolvedArm:
    """The arm a stored episode ran with, refused unless its files are still the same.

    Episodes from before arm digests were recorded (no ``arm_digest``) are taken as they are.
    """
    label = str(ep.config.get("arm") or DEFAULT_ARM)
    recorded = ep.config.get("arm_digest")
    try:
        arm = resolve_arm(label, project)
    except ArmProfileError as err:
        raise EpisodeError(
            f"episode {ep.id[:8]}: {err}; replaying it needs the arm files it ran with"
        ) from None
    if recorded is not None and recorded != arm.digest:
        what = (
            f"this workbench's {arm.spec.mjcf.name} is not the file it ran with"
            if label in ARMS
            else "the profile's files are not the ones it ran with"
        )
        raise EpisodeError(
            f"episode {ep.id[:8]} ran with arm {label} (digest {str(recorded)[:12]}…); {what} "
            f"(digest {arm.digest[:12]}…), so its ticks cannot be reproduced"
        )
    return arm


# ---- adding a profile ---------------------------------------------------------------------
class ArmCheckFailedError(ArmProfileError):
    """The check found errors, so the arm was not stored; ``report`` says what it found."""

    def __init__(self, message: str, report: ArmReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class AddedArm:
    profile: ArmProfile
    report: ArmReport
    new: bool  # False: the latest version already was this arm (nothing was added)


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as JSON numbers and lists (the report is stored as JSON)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


def report_json(report: ArmReport) -> dict[str, Any]:
    data = dataclasses.asdict(report) | {"ok": report.ok}
    out: dict[str, Any] = json.loads(json.dumps(data, default=_plain))
    return out


def _measured(spec: ArmSpec) -> tuple[list[float], dict[str, list[float] | None], dict[str, Any]]:
    """Home posture, joint limits and gripper controls, from the compiled (copied) model."""
    from sim.mujoco import bind_arm  # first: it picks MuJoCo's OpenGL platform (sim.gl)

    # isort: split
    import mujoco  # type: ignore[import-untyped]

    model = mujoco.MjSpec.from_file(str(spec.mjcf)).compile()
    arm = bind_arm(model, spec)
    limits: dict[str, list[float] | None] = {}
    for name, j in zip(spec.arm_joints, arm.joint_ids, strict=True):
        limits[name] = [float(v) for v in model.jnt_range[j]] if model.jnt_limited[j] else None
    ctrl = {
        name: {"open": float(o), "closed": float(c)}
        for name, o, c in zip(
            spec.gripper_actuators, arm.gripper_open, arm.gripper_closed, strict=True
        )
    }
    home_source = getattr(arm, "home_source", None)
    home_source = None if home_source is None else str(home_source)
    return [float(v) for v in arm.home], limits, {"ctrl": ctrl, "home_source": home_source}


def add_arm(
    project: Project,
    name: str,
    mjcf: Path,
    *,
    ee_site: str,
    arm_joints: tuple[str, ...],
    gripper_actuators: tuple[str, ...],
    trials: int = 3,
    force: bool = False,
    root: Path | None = None,
) -> AddedArm:
    """Check the arm on a copy in the project and store it as the next version of ``name``.

    Every file the MJCF reads must lie inside ``root`` (default: the MJCF's folder). Raises
    ArmSpecError for a file or names that cannot work, PathError for a file from outside
    ``root``, LimitError for a file too big or too many bodies, and ArmCheckFailedError (with
    the report) when the check finds errors and ``force`` is not set; none stores anything.
    """
    from sim.mujoco import ArmSpec, check_arm

    if name in ARMS:
        raise ArmProfileError(f"name: {name!r} is a shipped arm; give your arm another name")
    parse_arm_ref(name, field="name")
    if "@" in name:
        raise ArmProfileError(f"name: {name!r}: versions are numbered by the project, not '@'")
    source = Path(mjcf).expanduser()
    found = arm_files(source, root)
    with project.arms.stage(found.root, found.files, found.mjcf) as staged:
        check_copy(staged.mjcf, staged.root, source)
        spec = ArmSpec(staged.mjcf, ee_site, arm_joints, gripper_actuators)
        report = check_arm(spec, trials=trials)
        if not report.ok and not force:
            errors = [m.removeprefix("error: ") for m in report.messages if m.startswith("error:")]
            if report.succeeded < report.trials and not any("trial" in e for e in errors):
                errors.append(f"{report.trials - report.succeeded} trial(s) failed")
            raise ArmCheckFailedError(
                f"{source.name}: the arm check failed ({'; '.join(errors)}), so {name!r} was "
                "not added; fix the arm, or add it anyway with --force",
                report,
            )
        home, limits, extra = _measured(spec)
        jaw = report.names.get("jaw_gap_cm")
        gripper_range = extra | {"jaw_gap_cm": jaw}
        profile, new = project.arms.add(
            staged, name=name, source=str(source.resolve()), ee_site=ee_site,
            arm_joints=arm_joints, gripper_actuators=gripper_actuators, home=home,
            limits=limits, gripper_range=gripper_range, report=report_json(report),
        )  # fmt: skip
    return AddedArm(profile, report, new)
