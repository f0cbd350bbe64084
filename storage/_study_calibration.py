"""Calibration of raters against reference answers before they get production work (§5.1, §9.18).

A study's calibration set is a handful of videos (human controls plus a range of physics errors)
with reference answers: native Task and Physics levels per subgoal, optionally the reference gate
answers and holistic ratings, and discussion notes. A rater scores those videos like any other
(their own plan and gate decisions); the report compares their per-video T100 and P100 (from
their gate decisions, via :meth:`Annotations.live_score`) with the reference's, and lists every
per-subgoal and per-gate difference so the lead can talk them through.

Pass rule (documented in docs and the CLI): every calibration video is complete, and on each
video |ΔT100| ≤ 34 and |ΔP100| ≤ 25, i.e. within one native level of a one-subgoal video on
either axis; an axis undefined on one side only (e.g. all windows N/A against a scored
reference) is a mismatch. Per-subgoal and per-gate differences are shown, not scored: plans may
legitimately split a goal differently. The lead can record a pass anyway, with a reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import sqlite_utils
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from annotation import (
    GATES_ALL,
    Answer,
    Mark,
    Score,
    SubgoalResult,
    UserError,
    evaluate_subgoal,
    score,
    score_subgoals,
)
from storage._annotations import Annotations
from storage._db import write
from storage._history import History, now

TASK_TOLERANCE = 34.0  # one Task level of a one-subgoal video is 33.3 on the 0–100 scale
PHYSICS_TOLERANCE = 25.0  # one Physics level of a one-subgoal window is 25


class StudyError(UserError, ValueError):
    """A study operation that cannot be done; the project is unchanged."""


def _outcome(value: int | str) -> int | Mark:
    return value if isinstance(value, int) else Mark(value)


class CalibrationReference(BaseModel):
    """Reference answers for one calibration video.

    Give ``task`` and ``physics`` (native level per subgoal; physics may be "NA", "-" for
    unattempted or "?" for unresolved), or ``gates`` (per subgoal, gate id → answer), from which
    the levels follow; if both are given they must agree.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: list[int | str] | None = None
    physics: list[int | str] | None = None
    gates: list[dict[str, Answer]] | None = None
    holistic_task: float | None = None
    holistic_physics: float | None = None
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> CalibrationReference:
        if self.gates is not None:
            for i, answers in enumerate(self.gates, start=1):
                bad = sorted(set(answers) - set(GATES_ALL))
                if bad:
                    raise ValueError(f"S{i}: unknown gate(s) {bad}")
                res = evaluate_subgoal(answers)
                if not res.complete:
                    raise ValueError(f"S{i}: reference gates stop before a level is reached")
            task, physics = self._from_gates()
            if self.task is not None and [_outcome(t) for t in self.task] != task:
                raise ValueError(f"task levels {self.task} disagree with the gates ({task})")
            if self.physics is not None and [_outcome(p) for p in self.physics] != physics:
                raise ValueError(f"physics {self.physics} disagree with the gates ({physics})")
        elif self.task is None or self.physics is None:
            raise ValueError("give 'task' and 'physics' levels per subgoal, or 'gates'")
        self.score()  # range and consistency checks of the scoring library
        return self

    def _from_gates(self) -> tuple[list[int | Mark], list[int | Mark]]:
        results = [evaluate_subgoal(g) for g in self.gates or []]
        task = [r.task.outcome for r in results]
        physics = [r.physics.outcome for r in results]
        return [t for t in task if t is not None], [p for p in physics if p is not None]

    def levels(self) -> tuple[list[int | Mark], list[int | Mark]]:
        """Task and Physics outcomes per subgoal."""
        if self.gates is not None:
            return self._from_gates()
        return [_outcome(t) for t in self.task or []], [_outcome(p) for p in self.physics or []]

    def score(self) -> Score:
        task, physics = self.levels()
        return score(task, physics)


@dataclass(frozen=True)
class CalibrationItem:
    """One calibration video: the rater's scores against the reference, and what differs."""

    video_id: str
    complete: bool
    reference_t100: float | None
    reference_p100: float | None
    rater_t100: float | None
    rater_p100: float | None
    differences: tuple[str, ...]
    notes: str
    passed: bool


@dataclass(frozen=True)
class CalibrationReport:
    """A rater's calibration, video by video; ``passed`` applies the module's pass rule."""

    study_id: str
    rater_id: str
    items: tuple[CalibrationItem, ...]
    task_tolerance: float = TASK_TOLERANCE
    physics_tolerance: float = PHYSICS_TOLERANCE

    @property
    def passed(self) -> bool:
        return bool(self.items) and all(i.passed for i in self.items)

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"passed": self.passed}

    def summary(self) -> str:
        lines = [
            f"calibration of {self.rater_id} in {self.study_id}: "
            + ("PASSED" if self.passed else "NOT PASSED")
            + f" (per video |ΔT100| ≤ {self.task_tolerance:g}, "
            f"|ΔP100| ≤ {self.physics_tolerance:g}, all complete)"
        ]
        for it in self.items:
            mark = "ok " if it.passed else "DIFF"
            lines.append(
                f"  {mark} {it.video_id}: T100 {_f(it.rater_t100)} (ref {_f(it.reference_t100)})"
                f", P100 {_f(it.rater_p100)} (ref {_f(it.reference_p100)})"
            )
            lines.extend(f"       - {d}" for d in it.differences)
            if it.notes:
                lines.append(f"       notes: {it.notes}")
        return "\n".join(lines)


@dataclass(frozen=True)
class CalibrationResult:
    """What :meth:`complete_calibration` stored: the report, and whether production unlocked."""

    report: CalibrationReport
    passed: bool
    override_reason: str | None


def _f(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.1f}"


def _close(a: float | None, b: float | None, tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol + 1e-9


class CalibrationMixin:
    """Calibration methods of :class:`storage._studies.Studies` (uses only ``self._db``)."""

    _db: sqlite_utils.Database

    def set_calibration(
        self, study_id: str, references: Mapping[str, CalibrationReference | Mapping[str, Any]]
    ) -> None:
        """Replace the study's calibration set: video id → reference answers."""
        refs: dict[str, CalibrationReference] = {}
        for video_id, ref in references.items():
            try:
                refs[video_id] = CalibrationReference.model_validate(ref)
            except ValidationError as e:
                first = e.errors()[0]
                loc = ".".join(str(p) for p in first["loc"]) or "(reference)"
                raise StudyError(
                    f"calibration reference for {video_id}: {loc}: {first['msg']}"
                ) from None
        with write(self._db):
            if not self._db.execute("SELECT 1 FROM studies WHERE id = ?", [study_id]).fetchone():
                raise StudyError(f"no study {study_id!r} in this project")
            if self._db.execute(
                "SELECT 1 FROM assignments WHERE study_id = ?", [study_id]
            ).fetchone():
                raise StudyError(
                    f"study {study_id!r} is already assigned; its calibration set is fixed"
                )
            for video_id in refs:
                row = self._db.execute(
                    "SELECT case_id FROM videos WHERE id = ?", [video_id]
                ).fetchone()
                if row is None:
                    raise StudyError(f"calibration: no video {video_id!r} in this project")
                if self._db.execute(
                    "SELECT 1 FROM study_videos sv JOIN videos v ON v.id = sv.video_id "
                    "WHERE sv.study_id = ? AND v.case_id = ? AND sv.calibration = 0",
                    [study_id, row[0]],
                ).fetchone():
                    raise StudyError(
                        f"calibration: video {video_id} belongs to a panel case; choose "
                        "calibration videos from cases outside the panel"
                    )
            self._db.execute("DELETE FROM calibration_references WHERE study_id = ?", [study_id])
            self._db.execute(
                "DELETE FROM study_videos WHERE study_id = ? AND calibration = 1", [study_id]
            )
            for video_id, ref in refs.items():
                self._db.table("study_videos").insert(
                    {"study_id": study_id, "video_id": video_id, "calibration": 1}
                )
                self._db.table("calibration_references").insert(
                    {
                        "study_id": study_id,
                        "video_id": video_id,
                        "notes": ref.notes,
                        "reference": ref.model_dump_json(exclude_none=True),
                    }
                )

    def calibration_references(self, study_id: str) -> dict[str, CalibrationReference]:
        """The calibration set: video id → reference answers."""
        rows = self._db.execute(
            "SELECT video_id, reference FROM calibration_references WHERE study_id = ? "
            "ORDER BY video_id",
            [study_id],
        ).fetchall()
        return {r[0]: CalibrationReference.model_validate_json(r[1]) for r in rows}

    def calibration_report(self, study_id: str, rater_id: str) -> CalibrationReport:
        """The rater's calibration answers against the references, video by video."""
        refs = self.calibration_references(study_id)
        if not refs:
            raise StudyError(f"study {study_id!r} has no calibration set")
        ann = Annotations(self._db, History(self._db))
        items = []
        for video_id, ref in refs.items():
            case_id = self._db.execute(
                "SELECT case_id FROM videos WHERE id = ?", [video_id]
            ).fetchone()[0]
            # one gate walk per video, shared by the score and the detailed differences
            results = ann.results(video_id, case_id, rater_id)
            live = score_subgoals(results)
            want = ref.score()
            complete = live.n_subgoals > 0 and not live.provisional
            diffs: list[str] = []
            if live.n_subgoals == 0:
                diffs.append("no subgoal plan for this case yet")
            elif live.provisional:
                diffs.append(
                    f"unfinished: {live.n_complete} of {live.n_subgoals} subgoals complete"
                )
            got = live.score
            t_ok = _close(got.t100, want.t100, TASK_TOLERANCE)
            p_ok = _close(got.p100, want.p100, PHYSICS_TOLERANCE)
            for axis, ok, a, b in (
                ("T100", t_ok, got.t100, want.t100),
                ("P100", p_ok, got.p100, want.p100),
            ):
                if not ok:
                    diffs.append(f"{axis} {_f(a)} vs reference {_f(b)}: outside the tolerance")
            diffs.extend(self._detail_diffs(ann, ref, video_id, case_id, rater_id, results))
            items.append(
                CalibrationItem(
                    video_id=video_id,
                    complete=complete,
                    reference_t100=want.t100,
                    reference_p100=want.p100,
                    rater_t100=got.t100,
                    rater_p100=got.p100,
                    differences=tuple(diffs),
                    notes=ref.notes,
                    passed=complete and t_ok and p_ok,
                )
            )
        return CalibrationReport(study_id, rater_id, tuple(items))

    def complete_calibration(
        self, study_id: str, rater_id: str, *, override_reason: str | None = None
    ) -> CalibrationResult:
        """Record the rater's calibration result; a pass unlocks production work.

        ``override_reason`` records a pass despite differences (e.g. settled in the meeting).
        """
        report = self.calibration_report(study_id, rater_id)
        passed = report.passed or bool(override_reason and override_reason.strip())
        details = {"report": report.to_json(), "override": override_reason}
        with write(self._db):
            self._db.table("calibration_results").upsert(
                {
                    "study_id": study_id,
                    "rater_id": rater_id,
                    "passed": int(passed),
                    "details": json.dumps(details),
                    "completed_at": now(),
                },
                pk=("study_id", "rater_id"),
            )
        return CalibrationResult(report, passed, override_reason if not report.passed else None)

    def calibration_state(self, study_id: str, rater_id: str) -> str:
        """not required | pending | failed | passed | passed (override)."""
        if not self._db.execute(
            "SELECT 1 FROM calibration_references WHERE study_id = ?", [study_id]
        ).fetchone():
            return "not required"
        row = self._db.execute(
            "SELECT passed, details FROM calibration_results WHERE study_id = ? AND rater_id = ?",
            [study_id, rater_id],
        ).fetchone()
        if row is None:
            return "pending"
        if not row[0]:
            return "failed"
        overridden = json.loads(row[1] or "{}").get("override")
        return "passed (override)" if overridden else "passed"

    def production_unlocked(self, study_id: str, rater_id: str) -> bool:
        """Whether the rater may get production videos (calibration passed, or none needed)."""
        return self.calibration_state(study_id, rater_id) in (
            "not required",
            "passed",
            "passed (override)",
        )

    def _detail_diffs(
        self,
        ann: Annotations,
        ref: CalibrationReference,
        video_id: str,
        case_id: str,
        rater_id: str,
        results: Sequence[SubgoalResult],
    ) -> list[str]:
        plan = ann.plan(case_id, rater_id)
        task, physics = ref.levels()
        out: list[str] = []
        if plan and len(plan) != len(task):
            out.append(f"plan has {len(plan)} subgoal(s), the reference {len(task)}")
        for i, res in enumerate(results[: len(task)]):
            if res.task.outcome is not None and res.task.outcome != task[i]:
                out.append(f"S{i + 1}: Task level {res.task.outcome} vs reference {task[i]}")
            if res.physics.outcome is not None and res.physics.outcome != physics[i]:
                out.append(f"S{i + 1}: Physics {res.physics.outcome} vs reference {physics[i]}")
        if ref.gates is not None:
            answers = ann.answers(video_id, rater_id)
            for i, (sg, want) in enumerate(zip(plan, ref.gates, strict=False), start=1):
                mine = answers.get(sg.id, {})
                for gate in GATES_ALL:
                    a, b = mine.get(gate), want.get(gate)
                    if a != b and b is not None:
                        got = a.value if a else "not answered"
                        out.append(f"S{i} {gate}: {got} vs reference {b.value}")
        rating = ann.rating(video_id, rater_id)
        for axis, theirs, mine_h in (
            ("holistic Task", ref.holistic_task, rating.holistic_task if rating else None),
            ("holistic Physics", ref.holistic_physics, rating.holistic_physics if rating else None),
        ):
            if theirs is not None and mine_h != theirs:
                given = "not given" if mine_h is None else f"{mine_h:g}"
                out.append(f"{axis} {given} vs reference {theirs:g}")
        return out
