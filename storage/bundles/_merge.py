"""A rater's work as comparable items, and the three-way merge of a work bundle into the lead.

Work is compared item by item: a case's plan (as a whole: gate decisions point at subgoals by
position), one gate decision (video, subgoal position, gate → answer and note), a video's holistic
ratings, and a video's evidence marks (as a set). The merge is three-way: *base* is what the last
import of this rater's work wrote, *current* is what the lead project holds for the rater now,
*incoming* is the bundle. An item the lead has not touched since the last import takes the
bundle's value (the rater revised it); an item that differs on both sides is a conflict. Merging
is all or nothing: one conflict and nothing is written, so no decision is ever overwritten.
The merged answers must also obey the rubric's gate rules (:func:`check_gate_rules`): a bundle
cannot store an answer the gates panel would not have let the rater give.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

from annotation import Answer, GateMode, GateRuleError, check_answers
from storage._annotations import Annotations
from storage._history import History, now
from storage.bundles._format import WorkEvidence, WorkGate, WorkPayload, WorkSubgoal, WorkVideo

Items = dict[str, Any]


@dataclass(frozen=True)
class Conflict:
    """One item both the lead project and the bundle changed."""

    item: str  # e.g. "V-1A2B3C4D S2 T1", "plan of case stack_blocks"
    lead: Any
    bundle: Any
    why: str

    def __str__(self) -> str:
        lead, bundle = _show(self.lead), _show(self.bundle)
        return f"{self.item}: lead has {lead}, bundle has {bundle} ({self.why})"


def _show(v: Any) -> str:
    if v is None:
        return "nothing"
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and set(v) == {"answer", "note"}:
        return repr(v["answer"]) + (f" ({v['note']!r})" if v["note"] else "")
    if isinstance(v, list):
        return f"{len(v)} entr{'y' if len(v) == 1 else 'ies'}"
    return json.dumps(v)


@dataclass
class MergePlan:
    """What a merge would do; ``conflicts`` non-empty means it must not be applied."""

    writes: Items = field(default_factory=dict)  # item → the bundle's value (added or updated)
    removes: list[str] = field(default_factory=list)  # items the rater cleared
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    kept: int = 0  # items only the lead has (never imported): left alone
    conflicts: list[Conflict] = field(default_factory=list)


# ---- reading work -----------------------------------------------------------------------------
def read_work(db: sqlite_utils.Database, rater_id: str, scope: Mapping[str, str]) -> WorkPayload:
    """The rater's work on ``scope`` (video id → case id) as stored in ``db``."""
    ann = Annotations(db, History(db))
    plans: dict[str, list[WorkSubgoal]] = {}
    pos: dict[int, int] = {}
    for case in sorted(set(scope.values())):
        plan = ann.plan(case, rater_id)
        pos.update({s.id: s.position for s in plan})
        if plan:
            plans[case] = [
                WorkSubgoal(
                    source=s.source,
                    target=s.target,
                    action=s.action,
                    end_state=s.end_state,
                    requires=sorted(pos[r] for r in s.requires),
                    reason=s.reason,
                    enabling=s.enabling,
                )
                for s in plan
            ]
    videos: dict[str, WorkVideo] = {}
    for vid, case in sorted(scope.items()):
        row = db.execute(
            "SELECT id, holistic_task, holistic_physics, updated_at FROM ratings "
            "WHERE video_id = ? AND rater_id = ?",
            [vid, rater_id],
        ).fetchone()
        if row is None:
            continue
        gates = [
            WorkGate(subgoal=pos[sg], gate=g, answer=a, note=note or "", updated_at=at)
            for sg, g, a, note, at in db.execute(
                "SELECT subgoal_id, gate, answer, note, updated_at FROM gate_decisions "
                "WHERE rating_id = ? ORDER BY subgoal_id, gate",
                [row[0]],
            ).fetchall()
            if sg in pos
        ]
        marks = [
            WorkEvidence(
                subgoal=pos.get(m.subgoal_id) if m.subgoal_id else None,
                gate=m.gate,
                start_frame=m.start_frame,
                end_frame=m.end_frame,
                box=m.box,
                note=m.note,
            )
            for m in ann.evidence(vid, rater_id)
        ]
        if gates or marks or row[1] is not None or row[2] is not None:
            videos[vid] = WorkVideo(
                case=case,
                updated_at=row[3],
                holistic_task=row[1],
                holistic_physics=row[2],
                gates=gates,
                evidence=marks,
            )
    return WorkPayload(plans=plans, videos=videos)


def work_items(work: WorkPayload) -> Items:
    """The comparable items of a rater's work (timestamps left out: they are not content)."""
    out: Items = {}
    for case, plan in work.plans.items():
        if plan:
            out[f"plan/{case}"] = [s.model_dump(mode="json") for s in plan]
    for vid, v in work.videos.items():
        for g in v.gates:
            out[f"gate/{vid}/{g.subgoal}/{g.gate}"] = {"answer": g.answer.value, "note": g.note}
        if v.holistic_task is not None or v.holistic_physics is not None:
            out[f"holistic/{vid}"] = {"task": v.holistic_task, "physics": v.holistic_physics}
        if v.evidence:
            marks = [e.model_dump(mode="json") for e in v.evidence]
            out[f"evidence/{vid}"] = sorted(marks, key=lambda m: json.dumps(m, sort_keys=True))
    return out


def label(key: str) -> str:
    """How an item is named in a conflict list."""
    parts = key.split("/")
    if parts[0] == "plan":
        return f"plan of case {parts[1]}"
    if parts[0] == "gate":
        return f"{parts[1]} S{parts[2]} {parts[3]}"
    return f"{parts[0]} of {parts[1]}"


# ---- planning ---------------------------------------------------------------------------------
def plan_merge(
    current: Items, incoming: Items, base: Items | None, scope: Mapping[str, str], *, why: str
) -> MergePlan:
    """Compare item by item; ``why`` explains a conflict (what makes the lead's value foreign)."""
    plan = MergePlan()
    b_items = base or {}
    for key in sorted(set(current) | set(incoming) | set(b_items)):
        c, i, b = current.get(key), incoming.get(key), b_items.get(key)
        if c == i:
            plan.unchanged += i is not None
        elif i is None and b is None:
            plan.kept += 1
        elif c == b:
            if i is None:
                plan.removes.append(key)
            else:
                plan.writes[key] = i
                plan.added += c is None
                plan.updated += c is not None
        else:
            plan.conflicts.append(Conflict(label(key), c, i, why))
    _check_dangling(plan, current, scope)
    return plan


def _merged(current: Items, plan: MergePlan) -> Items:
    """The items as they would be after the merge."""
    return {k: v for k, v in current.items() if k not in plan.removes} | plan.writes


def _check_dangling(plan: MergePlan, current: Items, scope: Mapping[str, str]) -> None:
    """A plan that shrinks must not leave the lead's own decisions pointing at dropped subgoals."""
    final = _merged(current, plan)
    length = {k.split("/", 1)[1]: len(v) for k, v in final.items() if k.startswith("plan/")}
    clashing = {c.item for c in plan.conflicts}
    for key, value in final.items():
        kind, vid, *rest = key.split("/")
        n = length.get(scope.get(vid, ""), 0)
        if kind == "gate":
            dangling = int(rest[0]) > n
        elif kind == "evidence":
            dangling = any(m["subgoal"] is not None and m["subgoal"] > n for m in value)
        else:
            continue
        if dangling and label(key) not in clashing:
            why = "the bundle's plan drops the subgoal this lead-side decision uses"
            plan.conflicts.append(Conflict(label(key), value, None, why))


def outside_conflicts(
    db: sqlite_utils.Database, rater_id: str, scope: Mapping[str, str], plan: MergePlan
) -> list[Conflict]:
    """Plans are per case, shared with the rater's videos outside this study: a shrinking plan
    must not drop a subgoal that work outside the study still uses."""
    ann = Annotations(db, History(db))
    out: list[Conflict] = []
    for key in [*plan.writes, *plan.removes]:
        if not key.startswith("plan/"):
            continue
        case = key.split("/", 1)[1]
        old = [s.id for s in ann.plan(case, rater_id)]
        new_len = len(plan.writes.get(key) or [])
        dropped = old[new_len:]
        if not dropped:
            continue
        marks = ",".join("?" * len(dropped))
        inside = list(scope)
        rows = db.execute(
            f"SELECT DISTINCT r.video_id FROM ratings r WHERE r.rater_id = ? "
            f"AND r.video_id NOT IN ({','.join('?' * len(inside))}) AND ("
            f"EXISTS (SELECT 1 FROM gate_decisions g WHERE g.rating_id = r.id "
            f"AND g.subgoal_id IN ({marks})) OR EXISTS (SELECT 1 FROM evidence_marks e "
            f"WHERE e.rating_id = r.id AND e.subgoal_id IN ({marks})))",
            [rater_id, *inside, *dropped, *dropped],
        ).fetchall()
        for (vid,) in rows:
            why = f"the bundle's plan drops subgoals that work on {vid} (outside this study) uses"
            out.append(Conflict(label(key), f"{len(old)} subgoals", f"{new_len}", why))
    return out


def check_gate_rules(current: Items, plan: MergePlan, mode: GateMode, *, where: Path) -> None:
    """Raise :class:`annotation.GateRuleError`, naming the bundle and the item, if a subgoal the
    merge changes would end up with an answer the rubric forbids (after a "no", physics at
    t = 0, N/A after P1)."""
    final = _merged(current, plan)
    touched = {tuple(k.split("/")[1:3]) for k in [*plan.writes, *plan.removes] if k[:5] == "gate/"}
    subgoals: dict[tuple[str, ...], dict[str, Answer]] = {}
    for key, value in final.items():
        kind, *rest = key.split("/")
        if kind == "gate" and tuple(rest[:2]) in touched:
            subgoals.setdefault(tuple(rest[:2]), {})[rest[2]] = Answer(value["answer"])
    for (vid, pos), answers in sorted(subgoals.items()):
        try:
            check_answers(answers, mode=mode)
        except GateRuleError as e:
            item = label(f"gate/{vid}/{pos}/{e.gate}")
            raise GateRuleError(e.gate, f"{where}: {item}: {e}; nothing was imported") from None


# ---- applying ---------------------------------------------------------------------------------
def apply_merge(
    db: sqlite_utils.Database,
    rater_id: str,
    scope: Mapping[str, str],
    plan: MergePlan,
    incoming: WorkPayload,
) -> None:
    """Write a conflict-free merge plan (call inside one write transaction)."""
    db.table("raters").insert({"id": rater_id, "name": rater_id, "created_at": now()}, ignore=True)
    ann = Annotations(db, History(db))
    ids = {case: [s.id for s in ann.plan(case, rater_id)] for case in set(scope.values())}
    # Decisions first: a plan that shrinks may drop only subgoals nothing points at any more.
    for key in [*plan.removes, *(k for k in plan.writes if k.startswith("evidence/"))]:
        kind, vid, *rest = key.split("/")
        rating = _rating(db, vid, rater_id)
        if kind == "gate":
            db.execute(
                "DELETE FROM gate_decisions WHERE rating_id = ? AND subgoal_id = ? AND gate = ?",
                [rating, ids[scope[vid]][int(rest[0]) - 1], rest[1]],
            )
        elif kind == "evidence":
            db.execute("DELETE FROM evidence_marks WHERE rating_id = ?", [rating])
        elif kind == "holistic":
            db.table("ratings").update(rating, {"holistic_task": None, "holistic_physics": None})
    for key in [*plan.removes, *plan.writes]:
        if key.startswith("plan/"):
            case = key.split("/", 1)[1]
            ids[case] = _write_plan(db, case, rater_id, incoming.plans.get(case, []))
    for key, value in plan.writes.items():
        kind, vid, *rest = key.split("/")
        if kind == "plan":
            continue
        rating = _rating(db, vid, rater_id)
        sg_ids = ids[scope[vid]]
        if kind == "gate":
            gate = next(
                g
                for g in incoming.videos[vid].gates
                if g.subgoal == int(rest[0]) and g.gate == rest[1]
            )
            _upsert_gate(db, rating, sg_ids[gate.subgoal - 1], gate)
        elif kind == "holistic":
            db.table("ratings").update(
                rating, {"holistic_task": value["task"], "holistic_physics": value["physics"]}
            )
        elif kind == "evidence":
            for e in incoming.videos[vid].evidence:
                db.table("evidence_marks").insert(
                    {
                        "rating_id": rating,
                        "subgoal_id": sg_ids[e.subgoal - 1] if e.subgoal else None,
                        "gate": e.gate,
                        "start_frame": e.start_frame,
                        "end_frame": e.end_frame,
                        "box": json.dumps(list(e.box)) if e.box else None,
                        "note": e.note,
                        "created_at": now(),
                    }
                )
    for vid in {
        k.split("/")[1] for k in [*plan.writes, *plan.removes] if not k.startswith("plan/")
    }:
        if vid in incoming.videos and incoming.videos[vid].updated_at:
            db.execute(
                "UPDATE ratings SET updated_at = ? WHERE video_id = ? AND rater_id = ?",
                [incoming.videos[vid].updated_at, vid, rater_id],
            )


def _rating(db: sqlite_utils.Database, video_id: str, rater_id: str) -> int:
    row = db.execute(
        "SELECT id FROM ratings WHERE video_id = ? AND rater_id = ?", [video_id, rater_id]
    ).fetchone()
    if row:
        return int(row[0])
    return _insert(
        db,
        "ratings",
        {"video_id": video_id, "rater_id": rater_id, "created_at": now(), "updated_at": now()},
    )


def _insert(db: sqlite_utils.Database, table: str, values: dict[str, Any]) -> int:
    cur = db.execute(
        f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
        list(values.values()),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def _upsert_gate(db: sqlite_utils.Database, rating: int, subgoal_id: int, g: WorkGate) -> None:
    values = {"answer": g.answer.value, "note": g.note, "updated_at": g.updated_at or now()}
    row = db.execute(
        "SELECT id FROM gate_decisions WHERE rating_id = ? AND subgoal_id = ? AND gate = ?",
        [rating, subgoal_id, g.gate],
    ).fetchone()
    if row:
        db.table("gate_decisions").update(row[0], values)
    else:
        db.table("gate_decisions").insert(
            {"rating_id": rating, "subgoal_id": subgoal_id, "gate": g.gate} | values
        )


def _write_plan(
    db: sqlite_utils.Database, case_id: str, rater_id: str, subgoals: list[WorkSubgoal]
) -> list[int]:
    """Make the rater's plan for the case equal ``subgoals``, keeping ids position by position."""
    row = db.execute(
        "SELECT id FROM subgoal_plans WHERE case_id = ? AND rater_id = ?", [case_id, rater_id]
    ).fetchone()
    if row:
        plan_id = int(row[0])
    else:
        new = {"case_id": case_id, "rater_id": rater_id, "created_at": now()}
        plan_id = _insert(db, "subgoal_plans", new)
    existing = [
        r[0]
        for r in db.execute(
            "SELECT id FROM subgoals WHERE plan_id = ? ORDER BY position", [plan_id]
        ).fetchall()
    ]
    for extra in existing[len(subgoals) :]:
        db.execute("DELETE FROM subgoals WHERE id = ?", [extra])
    ids: list[int] = []
    for pos, sg in enumerate(subgoals, start=1):
        values = {
            "position": pos,
            "source": sg.source,
            "target": sg.target,
            "action": sg.action,
            "end_state": sg.end_state,
            "reason": sg.reason,
            "enabling": int(sg.enabling),
        }
        if pos <= len(existing):
            db.table("subgoals").update(existing[pos - 1], values)
            ids.append(existing[pos - 1])
        else:
            ids.append(_insert(db, "subgoals", {"plan_id": plan_id, "requires": "[]"} | values))
    for pos, sg in enumerate(subgoals, start=1):
        requires = sorted(ids[r - 1] for r in sg.requires)
        db.table("subgoals").update(ids[pos - 1], {"requires": json.dumps(requires)})
    return ids
