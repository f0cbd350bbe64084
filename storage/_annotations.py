"""A rater's annotations: subgoal plans, gate decisions, evidence marks, holistic ratings.

Each public method is one user action: it runs in one write transaction, validates its input
(raising :class:`AnnotationError` with a message a user can act on, changing nothing), records
its row changes for undo, and commits before returning.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import sqlite_utils

from annotation import (
    GATES_ALL,
    Answer,
    GateMode,
    LiveScore,
    SubgoalResult,
    UserError,
    blocked_answers,
    check_answer,
    evaluate_subgoal,
    score_subgoals,
)
from storage._db import write
from storage._history import Changeset, History, now
from storage._records import EvidenceMark, GateEvidence, Rating, Subgoal

GATES = GATES_ALL
_GATE_MODE = "gate_mode"  # meta key: how this project's raters enter gates (GateMode)


class AnnotationError(UserError, ValueError):
    """A user edit that cannot be applied; the project is unchanged."""


class Annotations:
    """Reads and edits one project's annotations."""

    def __init__(self, db: sqlite_utils.Database, history: History) -> None:
        self._db = db
        self._history = history

    @contextmanager
    def _action(self, scope: str, label: str) -> Iterator[Changeset]:
        with write(self._db):
            cs = Changeset(self._db)
            yield cs
            self._history.record(scope, label, cs)

    # ---- raters -------------------------------------------------------------------------
    def ensure_rater(self, rater_id: str, name: str | None = None) -> None:
        """Create the rater if new (not an undoable action)."""
        if not rater_id.strip():
            raise AnnotationError("rater id must not be empty")
        with write(self._db):
            self._db.table("raters").insert(
                {"id": rater_id, "name": name or rater_id, "created_at": now()}, ignore=True
            )

    # ---- subgoal plans ------------------------------------------------------------------
    def plan(self, case_id: str, rater_id: str) -> list[Subgoal]:
        """The rater's subgoals for a case, in order (empty if none yet)."""
        rows = _dicts(
            self._db.execute(
                "SELECT s.* FROM subgoals s JOIN subgoal_plans p ON p.id = s.plan_id "
                "WHERE p.case_id = ? AND p.rater_id = ? ORDER BY s.position",
                [case_id, rater_id],
            )
        )
        return [_subgoal(r) for r in rows]

    def add_subgoal(
        self,
        case_id: str,
        rater_id: str,
        *,
        source: str,
        action: str,
        target: str | None = None,
        end_state: str = "",
        requires: Sequence[int] = (),
        reason: str = "",
        enabling: bool = False,
    ) -> Subgoal:
        """Append a subgoal to the rater's plan for ``case_id``."""
        existing = self.plan(case_id, rater_id)
        _validate_fields(source, action, target)
        _validate_requires(requires, existing, own_position=len(existing) + 1)
        position = len(existing) + 1
        with self._action(rater_id, f"Add subgoal S{position}") as cs:
            plan_id = self._plan_id(cs, case_id, rater_id)
            new_id = cs.insert(
                "subgoals",
                {
                    "plan_id": plan_id,
                    "position": position,
                    "source": source.strip(),
                    "target": (target or "").strip() or None,
                    "action": action.strip(),
                    "end_state": end_state.strip(),
                    "requires": json.dumps(sorted(set(requires))),
                    "reason": reason,
                    "enabling": int(enabling),
                },
            )
        return self.subgoal(new_id)

    def update_subgoal(self, subgoal_id: int, rater_id: str, **fields: Any) -> Subgoal:
        """Edit fields of a subgoal (any of source, target, action, end_state, requires ...)."""
        sg = self.subgoal(subgoal_id)
        allowed = {"source", "target", "action", "end_state", "requires", "reason", "enabling"}
        unknown = set(fields) - allowed
        if unknown:
            raise AnnotationError(f"unknown subgoal field(s): {', '.join(sorted(unknown))}")
        merged = sg.model_dump() | fields
        _validate_fields(merged["source"], merged["action"], merged["target"])
        siblings = [s for s in self._siblings(sg) if s.position < sg.position]
        _validate_requires(merged["requires"], siblings, own_position=sg.position)
        values: dict[str, Any] = {}
        for key, value in fields.items():
            if key == "requires":
                values[key] = json.dumps(sorted(set(value)))
            elif key == "enabling":
                values[key] = int(bool(value))
            elif key == "target":
                values[key] = (value or "").strip() or None
            else:
                values[key] = str(value).strip() if key != "reason" else str(value)
        with self._action(rater_id, f"Edit {sg.label}") as cs:
            cs.update("subgoals", subgoal_id, values)
        return self.subgoal(subgoal_id)

    def delete_subgoal(self, subgoal_id: int, rater_id: str) -> None:
        """Delete a subgoal with its decisions and evidence; later subgoals move up."""
        sg = self.subgoal(subgoal_id)
        with self._action(rater_id, f"Delete {sg.label}") as cs:
            for table in ("gate_decisions", "evidence_marks"):
                for (pk,) in self._db.execute(
                    f"SELECT id FROM {table} WHERE subgoal_id = ?", [subgoal_id]
                ).fetchall():
                    cs.delete(table, pk)
            cs.delete("subgoals", subgoal_id)
            for other in self._siblings(sg):
                if other.position > sg.position:
                    reqs = [r for r in other.requires if r != subgoal_id]
                    cs.update(
                        "subgoals",
                        other.id,
                        {"position": other.position - 1, "requires": json.dumps(reqs)},
                    )

    def subgoal(self, subgoal_id: int) -> Subgoal:
        rows = list(self._db.table("subgoals").rows_where("id = ?", [subgoal_id]))
        if not rows:
            raise AnnotationError(f"subgoal {subgoal_id} does not exist")
        return _subgoal(rows[0])

    # ---- gate decisions -----------------------------------------------------------------
    def gate_mode(self) -> GateMode:
        """How gates are entered in this project: early exit (default) or every gate (pilot)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", [_GATE_MODE]).fetchone()
        if row is None:
            return GateMode.GATED
        try:
            return GateMode(row[0])
        except ValueError:
            raise AnnotationError(
                f"project setting {_GATE_MODE!r} is {row[0]!r}; expected one of "
                f"{', '.join(m.value for m in GateMode)}"
            ) from None

    def set_gate_mode(self, mode: GateMode) -> None:
        """Switch between gated entry and the pilot "record all gates" mode (spec §9 item 9).

        Not an undoable action: it is a project setting, not a decision. Answers recorded in
        pilot mode past a "no" stay stored after switching back; the walk never scores them.
        """
        try:
            value = GateMode(mode)
        except ValueError:
            known = ", ".join(m.value for m in GateMode)
            raise AnnotationError(f"unknown gate mode {mode!r}; expected one of {known}") from None
        with write(self._db):
            self._db.table("meta").upsert({"key": _GATE_MODE, "value": value.value}, pk="key")

    def set_answer(
        self, video_id: str, rater_id: str, subgoal_id: int, gate: str, answer: Answer | None
    ) -> None:
        """Record (or clear, with None) the answer to one gate for one subgoal.

        The rubric's entry rules decide (:func:`annotation.check_answer`): a gate that is not
        reached or is locked raises :class:`annotation.GateRuleError` and nothing changes. An
        answer that leaves later recorded answers unreached (a "no", or T1 "no" locking Physics)
        clears them in the same action, so undo brings them back together.
        """
        with write(self._db):
            sg = self.subgoal(subgoal_id)
            mode = self.gate_mode()
            current = self.answers(video_id, rater_id).get(subgoal_id, {})
            others = {g: a for g, a in current.items() if g != gate}
            check_answer(others, gate, answer, mode=mode)
            after = others if answer is None else others | {gate: answer}
            cleared = blocked_answers(after, mode=mode)
            label = f"{gate} {answer.value if answer else 'cleared'} for {sg.label}"
            if cleared:
                label += f" (clears {', '.join(cleared)})"
            with self._action(rater_id, label) as cs:
                rating_id = self._rating_id(cs, video_id, rater_id)
                rows = dict(
                    self._db.execute(
                        "SELECT gate, id FROM gate_decisions WHERE rating_id=? AND subgoal_id=?",
                        [rating_id, subgoal_id],
                    ).fetchall()
                )
                for g in cleared:
                    cs.delete("gate_decisions", rows[g])
                row = rows.get(gate)
                if answer is None:
                    if row is not None:
                        cs.delete("gate_decisions", row)
                elif row is not None:
                    cs.update("gate_decisions", row, {"answer": answer.value, "updated_at": now()})
                else:
                    cs.insert(
                        "gate_decisions",
                        {
                            "rating_id": rating_id,
                            "subgoal_id": subgoal_id,
                            "gate": gate,
                            "answer": answer.value,
                            "note": "",
                            "updated_at": now(),
                        },
                    )
                cs.update("ratings", rating_id, {"updated_at": now()})

    def answers(self, video_id: str, rater_id: str) -> dict[int, dict[str, Answer]]:
        """Recorded answers per subgoal id (gate id → answer)."""
        out: dict[int, dict[str, Answer]] = {}
        for sg_id, gate, answer in self._db.execute(
            "SELECT g.subgoal_id, g.gate, g.answer FROM gate_decisions g "
            "JOIN ratings r ON r.id = g.rating_id WHERE r.video_id = ? AND r.rater_id = ?",
            [video_id, rater_id],
        ).fetchall():
            out.setdefault(sg_id, {})[gate] = Answer(answer)
        return out

    def results(self, video_id: str, case_id: str, rater_id: str) -> list[SubgoalResult]:
        """Per-subgoal gate walks, in plan order."""
        answers = self.answers(video_id, rater_id)
        return [evaluate_subgoal(answers.get(s.id, {})) for s in self.plan(case_id, rater_id)]

    def live_score(self, video_id: str, case_id: str, rater_id: str) -> LiveScore:
        """T, P, S and coverage as far as the video has been annotated."""
        return score_subgoals(self.results(video_id, case_id, rater_id))

    # ---- evidence -----------------------------------------------------------------------
    def add_evidence(
        self,
        video_id: str,
        rater_id: str,
        *,
        start_frame: int,
        end_frame: int,
        subgoal_id: int | None = None,
        gate: str | None = None,
        box: tuple[float, float, float, float] | None = None,
        note: str = "",
    ) -> EvidenceMark:
        """Mark a frame range (and optionally a box) as evidence, linked to a gate if given."""
        if start_frame < 0 or end_frame < start_frame:
            raise AnnotationError(f"evidence frames {start_frame}–{end_frame} are not a range")
        if gate is not None and gate not in GATES:
            raise AnnotationError(f"unknown gate {gate!r}")
        if box is not None and not all(0.0 <= v <= 1.0 for v in box):
            raise AnnotationError("evidence box must lie inside the frame (0..1)")
        where = f" for {self.subgoal(subgoal_id).label}" if subgoal_id is not None else ""
        with self._action(rater_id, f"Mark evidence {start_frame}–{end_frame}{where}") as cs:
            rating_id = self._rating_id(cs, video_id, rater_id)
            pk = cs.insert(
                "evidence_marks",
                {
                    "rating_id": rating_id,
                    "subgoal_id": subgoal_id,
                    "gate": gate,
                    "start_frame": start_frame,
                    "end_frame": end_frame,
                    "box": json.dumps(list(box)) if box else None,
                    "note": note,
                    "created_at": now(),
                },
            )
        return self._evidence(pk)

    def update_evidence_note(self, evidence_id: int, rater_id: str, note: str) -> None:
        with self._action(rater_id, "Edit evidence note") as cs:
            cs.update("evidence_marks", evidence_id, {"note": note})

    def delete_evidence(self, evidence_id: int, rater_id: str) -> None:
        with self._action(rater_id, "Delete evidence") as cs:
            cs.delete("evidence_marks", evidence_id)

    def evidence(self, video_id: str, rater_id: str) -> list[EvidenceMark]:
        rows = _dicts(
            self._db.execute(
                "SELECT e.* FROM evidence_marks e JOIN ratings r ON r.id = e.rating_id "
                "WHERE r.video_id = ? AND r.rater_id = ? ORDER BY e.start_frame, e.id",
                [video_id, rater_id],
            )
        )
        return [_evidence_mark(r) for r in rows]

    def gate_evidence(self, media_sha256: str) -> list[GateEvidence]:
        """Every rater's evidence marks on any video with this content, each with its subgoal
        and the answer given at its gate: the rubric's evidence on an episode's own video."""
        rows = self._db.execute(
            "SELECT v.id, r.rater_id, s.position, e.gate, e.start_frame, e.end_frame, e.note, "
            "g.answer FROM evidence_marks e JOIN ratings r ON r.id = e.rating_id "
            "JOIN videos v ON v.id = r.video_id LEFT JOIN subgoals s ON s.id = e.subgoal_id "
            "LEFT JOIN gate_decisions g ON g.rating_id = e.rating_id "
            "AND g.subgoal_id = e.subgoal_id AND g.gate = e.gate "
            "WHERE v.media = ? ORDER BY e.start_frame, e.id",
            [media_sha256],
        ).fetchall()
        return [
            GateEvidence(video_id=v, rater_id=r, subgoal=None if pos is None else f"S{pos}",
                         gate=gate, start_frame=a, end_frame=b, note=note or "", answer=ans)
            for v, r, pos, gate, a, b, note, ans in rows
        ]  # fmt: skip

    # ---- holistic ratings ---------------------------------------------------------------
    def set_holistic(
        self, video_id: str, rater_id: str, *, task: float | None, physics: float | None
    ) -> None:
        """Optional whole-video ratings (Task 0–3, Physics 0–4), the ablation reference."""
        if task is not None and not 0 <= task <= 3:
            raise AnnotationError(f"holistic task rating must be 0–3, got {task}")
        if physics is not None and not 0 <= physics <= 4:
            raise AnnotationError(f"holistic physics rating must be 0–4, got {physics}")
        with self._action(rater_id, "Set holistic ratings") as cs:
            rating_id = self._rating_id(cs, video_id, rater_id)
            cs.update("ratings", rating_id, {"holistic_task": task, "holistic_physics": physics})

    def rating(self, video_id: str, rater_id: str) -> Rating | None:
        rows = list(
            self._db.table("ratings").rows_where("video_id=? AND rater_id=?", [video_id, rater_id])
        )
        return Rating(**_pick(rows[0], Rating)) if rows else None

    # ---- helpers ------------------------------------------------------------------------
    def _plan_id(self, cs: Changeset, case_id: str, rater_id: str) -> int:
        row = self._db.execute(
            "SELECT id FROM subgoal_plans WHERE case_id = ? AND rater_id = ?", [case_id, rater_id]
        ).fetchone()
        if row:
            return int(row[0])
        self.ensure_rater(rater_id)
        return cs.insert(
            "subgoal_plans", {"case_id": case_id, "rater_id": rater_id, "created_at": now()}
        )

    def _rating_id(self, cs: Changeset, video_id: str, rater_id: str) -> int:
        row = self._db.execute(
            "SELECT id FROM ratings WHERE video_id = ? AND rater_id = ?", [video_id, rater_id]
        ).fetchone()
        if row:
            return int(row[0])
        self.ensure_rater(rater_id)
        return cs.insert(
            "ratings",
            {"video_id": video_id, "rater_id": rater_id, "created_at": now(), "updated_at": now()},
        )

    def _siblings(self, sg: Subgoal) -> list[Subgoal]:
        rows = self._db.table("subgoals").rows_where(
            "plan_id = ?", [sg.plan_id], order_by="position"
        )
        return [_subgoal(r) for r in rows]

    def _evidence(self, pk: int) -> EvidenceMark:
        return _evidence_mark(
            next(iter(self._db.table("evidence_marks").rows_where("id = ?", [pk])))
        )


def _dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """A query's rows as dicts, named by the cursor (no schema lookup per call)."""
    cols = [d[0] for d in cursor.description]
    return [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()]


def _evidence_mark(row: dict[str, Any]) -> EvidenceMark:
    box = json.loads(row["box"]) if row["box"] else None
    return EvidenceMark(**(_pick(row, EvidenceMark) | {"box": tuple(box) if box else None}))


def _pick(row: dict[str, Any], model: type[Any]) -> dict[str, Any]:
    return {k: row[k] for k in model.model_fields if k in row}


def _subgoal(row: dict[str, Any]) -> Subgoal:
    return Subgoal(
        **(
            _pick(row, Subgoal)
            | {
                "requires": tuple(json.loads(row["requires"] or "[]")),
                "enabling": bool(row["enabling"]),
                "end_state": row["end_state"] or "",
                "reason": row["reason"] or "",
            }
        )
    )


def _validate_fields(source: str, action: str, target: str | None) -> None:
    if not str(source).strip():
        raise AnnotationError("a subgoal needs a source object")
    if not str(action).strip():
        raise AnnotationError("a subgoal needs an action")
    if target and any(sep in target for sep in (",", " and ", ";")):
        raise AnnotationError(
            f"target {target!r} names more than one object; a subgoal has at most one target — "
            "split it into one subgoal per target"
        )


def _validate_requires(
    requires: Sequence[int], earlier: Sequence[Subgoal], own_position: int
) -> None:
    earlier_ids = {s.id: s.label for s in earlier if s.position < own_position}
    for r in requires:
        if r not in earlier_ids:
            raise AnnotationError(
                f"S{own_position} may only require earlier subgoals "
                f"({', '.join(earlier_ids.values()) or 'none yet'}); {r} is not one of them"
            )
