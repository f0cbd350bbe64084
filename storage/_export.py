"""Export annotations as CSV (one row per rated subgoal) or JSON (nested per video and rater),
with each video's continuity scan: its candidate windows and the scan version, or "not scanned".

Columns are documented in docs/export-format.md; keep that table in step with ``CSV_COLUMNS``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Any

from annotation import GATES_ALL, Mark, evaluate_subgoal, score_subgoals

if TYPE_CHECKING:
    from storage._project import Project

CSV_COLUMNS = (
    "video_id",
    "case_id",
    "rater_id",
    "subgoal",
    "source",
    "target",
    "action",
    "end_state",
    "requires",
    *GATES_ALL,
    "task_level",
    "physics_state",
    "evidence",
    "video_T100",
    "video_P100",
    "video_S",
    "video_coverage",
    "video_complete",
    "video_continuity",
    "video_continuity_version",
)

NOT_SCANNED = "not scanned"


def _fmt(outcome: int | Mark | None) -> str:
    if outcome is None:
        return "pending"
    if isinstance(outcome, Mark):
        return {Mark.NA: "NA", Mark.UNATTEMPTED: "unattempted", Mark.UNRESOLVED: "unresolved"}[
            outcome
        ]
    return str(outcome)


def _num(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


def collect(project: Project, *, include_identity: bool = True) -> list[dict[str, Any]]:
    """Every rating in the project as nested dicts (the JSON export).

    ``include_identity=False`` leaves out model, seed and role (a blind rater-side export).
    """
    out: list[dict[str, Any]] = []
    ann = project.annotations
    for video_id, rater_id in project.db.execute(
        "SELECT video_id, rater_id FROM ratings ORDER BY video_id, rater_id"
    ).fetchall():
        video = project.video(video_id)
        plan = ann.plan(video.case_id, rater_id)
        answers = ann.answers(video_id, rater_id)
        # plan and answers are already here: derive levels and scores from them
        results = [evaluate_subgoal(answers.get(s.id, {})) for s in plan]
        live = score_subgoals(results)
        marks = ann.evidence(video_id, rater_id)
        rating = ann.rating(video_id, rater_id)
        subgoals = []
        for sg, res in zip(plan, results, strict=True):
            subgoals.append(
                {
                    "subgoal": sg.label,
                    "source": sg.source,
                    "target": sg.target,
                    "action": sg.action,
                    "end_state": sg.end_state,
                    "requires": [s.label for s in plan if s.id in sg.requires],
                    "gates": {g: a.value for g, a in sorted(answers.get(sg.id, {}).items())},
                    "task_level": _fmt(res.task.outcome),
                    "physics_state": _fmt(res.physics.outcome),
                    "evidence": [
                        {
                            "gate": m.gate,
                            "start_frame": m.start_frame,
                            "end_frame": m.end_frame,
                            "box": list(m.box) if m.box else None,
                            "note": m.note,
                        }
                        for m in marks
                        if m.subgoal_id == sg.id
                    ],
                }
            )
        entry: dict[str, Any] = {
            "video_id": video_id,
            "case_id": video.case_id,
            "rater_id": rater_id,
            "scores": {
                "T100": _num(live.score.t100),
                "P100": _num(live.score.p100),
                "S": _num(live.score.s),
                "coverage": _num(live.score.coverage),
                "complete": not live.provisional,
            },
            "holistic": {
                "task": rating.holistic_task if rating else None,
                "physics": rating.holistic_physics if rating else None,
            },
            "subgoals": subgoals,
            "video_evidence": [
                {"start_frame": m.start_frame, "end_frame": m.end_frame, "note": m.note}
                for m in marks
                if m.subgoal_id is None
            ],
        }
        if include_identity:
            role = video.role.value if video.role else None  # None in a rater project
            entry |= {"role": role, "model": video.model, "seed": video.seed}
        out.append(entry)
    return out


def continuity_export(project: Project) -> list[dict[str, Any]]:
    """Every video's continuity scan of the current version (windows best first), or
    ``"not scanned"`` (never scanned, or only by an older version of the scan)."""
    out: list[dict[str, Any]] = []
    for video in project.videos():
        scan = project.continuity.get(video.media)
        entry: dict[str, Any] = {"video_id": video.id, "case_id": video.case_id}
        if scan is None:
            entry |= {"status": NOT_SCANNED, "version": None, "duration_s": None, "windows": None}
        else:
            entry |= {"status": "scanned", "version": scan.version, "duration_s": scan.duration_s,
                      "windows": [w.to_dict() for w in scan.windows]}  # fmt: skip
        out.append(entry)
    return out


def to_json(project: Project) -> str:
    return json.dumps(
        {"format": "rollout-workbench/export@1", "ratings": collect(project),
         "continuity": continuity_export(project)},
        indent=2,
    )  # fmt: skip


def _windows_cell(entry: dict[str, Any]) -> str:
    """``start-end score kind`` per window, ``; `` separated; ``none`` when the scan found
    nothing, which is not the same as ``not scanned``."""
    if entry["windows"] is None:
        return NOT_SCANNED
    cells = [f"{w['start_s']:g}-{w['end_s']:g} {w['score']:g} {w['kind']}"
             for w in entry["windows"]]  # fmt: skip
    return "; ".join(cells) or "none"


def to_csv(project: Project) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    scans = {e["video_id"]: e for e in continuity_export(project)}
    for entry in collect(project):
        sc = entry["scores"]
        scan = scans[entry["video_id"]]
        for sg in entry["subgoals"]:
            w.writerow(
                {
                    "video_id": entry["video_id"],
                    "case_id": entry["case_id"],
                    "rater_id": entry["rater_id"],
                    "subgoal": sg["subgoal"],
                    "source": sg["source"],
                    "target": sg["target"] or "",
                    "action": sg["action"],
                    "end_state": sg["end_state"],
                    "requires": " ".join(sg["requires"]),
                    **{g: sg["gates"].get(g, "") for g in GATES_ALL},
                    "task_level": sg["task_level"],
                    "physics_state": sg["physics_state"],
                    "evidence": "; ".join(
                        f"{e['gate'] or '-'}@{e['start_frame']}-{e['end_frame']}"
                        + (f" {e['note']}" if e["note"] else "")
                        for e in sg["evidence"]
                    ),
                    "video_T100": sc["T100"],
                    "video_P100": sc["P100"],
                    "video_S": sc["S"],
                    "video_coverage": sc["coverage"],
                    "video_complete": sc["complete"],
                    "video_continuity": _windows_cell(scan),
                    "video_continuity_version": scan["version"] or "",
                }
            )
    return buf.getvalue()


__all__ = ["CSV_COLUMNS", "NOT_SCANNED", "collect", "continuity_export", "to_csv", "to_json"]
