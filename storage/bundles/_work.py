"""The rater → lead direction: export a rater project's work, merge it into the lead's project.

The import is all or nothing, in one transaction, and writes under the bundle's rater only. The
same bundle twice changes nothing (recognised by its sha256 in ``bundle_imports``); a later
bundle from the same rater project that only adds or revises untouched items merges cleanly; a
bundle older than work already imported from that rater project is refused; any item the lead
project changed since the last import (or holds from elsewhere) that the bundle also changes is a
conflict, listed item by item, and nothing is written (see :mod:`storage.bundles._merge`).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage._db import write
from storage._history import now
from storage._study_calibration import StudyError
from storage.bundles._assignment import SCHEMA_VERSION, bundle_origin, case_token
from storage.bundles._format import PAYLOAD, BundleError, WorkPayload, read_bundle, write_bundle
from storage.bundles._merge import (
    Conflict,
    apply_merge,
    check_gate_rules,
    outside_conflicts,
    plan_merge,
    read_work,
    work_items,
)

if TYPE_CHECKING:
    from storage._project import Project

_EXPORTS = "work_exports"  # meta key in a rater project: ids of the work bundles it wrote


@dataclass(frozen=True)
class WorkExport:
    """What :func:`export_work` wrote."""

    path: Path
    videos: int
    items: int

    def summary(self) -> str:
        return f"wrote {self.path}: work on {self.videos} video(s), {self.items} item(s)"


@dataclass(frozen=True)
class MergeReport:
    """What importing a work bundle did (or, with conflicts, why it did nothing)."""

    bundle: Path
    study_id: str
    rater_id: str
    already_imported: bool = False
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    kept: int = 0  # items only the lead project has; left as they are
    conflicts: tuple[Conflict, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def summary(self) -> str:
        head = f"{self.bundle}: work of {self.rater_id} in study {self.study_id}: "
        if self.already_imported:
            return head + "already imported; nothing changed"
        if self.conflicts:
            lines = [f"  - {c}" for c in self.conflicts[:20]]
            if len(self.conflicts) > 20:
                lines.append(f"  ... and {len(self.conflicts) - 20} more")
            return (
                head
                + f"{len(self.conflicts)} conflicting item(s); nothing was imported\n"
                + "\n".join(lines)
            )
        return head + (
            f"{self.added} added, {self.updated} updated, {self.removed} removed, "
            f"{self.unchanged} unchanged"
        )


class MergeConflictError(BundleError):
    """A work bundle that conflicts with the lead project; ``report`` lists every item."""

    def __init__(self, report: MergeReport) -> None:
        super().__init__(report.summary())
        self.report = report


def export_work(project: Project, out: Path) -> WorkExport:
    """Write the rater's work in this rater project to ``out`` (one file)."""
    origin = bundle_origin(project)
    if origin is None:
        raise BundleError(
            f"{project.root}: not a rater project; work is exported from the folder "
            "an assignment bundle was opened into"
        )
    rater = origin.rater_id
    others = [
        r
        for (r,) in project.db.execute(
            "SELECT rater_id FROM ratings UNION SELECT rater_id FROM subgoal_plans"
        ).fetchall()
        if r != rater
    ]
    if others:
        raise StudyError(
            f"{project.root}: has work recorded as rater {', '.join(sorted(others))}, but this "
            f"assignment is for {rater!r}; set WB_RATER={rater} when annotating"
        )
    scope = {a.video_id: a.case_id for a in project.studies.assignments(origin.study_id, rater)}
    row = project.db.execute("SELECT value FROM meta WHERE key = ?", [_EXPORTS]).fetchone()
    earlier: list[str] = json.loads(row[0]) if row else []
    work = read_work(project.db, rater, scope).model_copy(
        update={"export_id": uuid.uuid4().hex, "ancestors": earlier}
    )
    with write_bundle(
        out,
        kind="work",
        schema_version=SCHEMA_VERSION,
        project_id=origin.project_id,
        study_id=origin.study_id,
        rater_id=rater,
        created_at=now(),
    ) as w:
        w.add_json(PAYLOAD, work.model_dump(mode="json"))
    # Remember the export, so the next bundle says what it builds on (a copy of this folder
    # that goes its own way will not know this export, and the lead can tell).
    with write(project.db):
        value = json.dumps([*earlier, work.export_id])
        project.db.table("meta").upsert({"key": _EXPORTS, "value": value}, pk="key")
    return WorkExport(Path(out), len(work.videos), len(work_items(work)))


def import_work(project: Project, bundle: Path) -> MergeReport:
    """Merge a rater's work bundle into the lead project (all or nothing).

    Raises:
        BundleError: The bundle is damaged, edited, foreign, too new, or not for this study.
        MergeConflictError: Items conflict; ``.report`` lists them and nothing was written.
        GateRuleError: The merged work would hold an answer the rubric forbids (named by video,
            subgoal and gate); nothing was written.
    """
    with read_bundle(bundle, kind="work", schema_version=SCHEMA_VERSION) as b:
        m = b.manifest
        path = b.path
        if bundle_origin(project) is not None:
            raise BundleError(
                f"{path}: {project.root} is a rater project; import work into the lead's project"
            )
        if m.project_id != project.project_id:
            raise BundleError(
                f"{path}: belongs to another project ({m.project_id}); this "
                f"project is {project.project_id}"
            )
        st = project.studies
        if m.study_id not in {s.id for s in st.studies()}:
            raise BundleError(f"{path}: study {m.study_id!r} is not in this project")
        assigned = st.assignments(m.study_id, m.rater_id)
        if not assigned:
            raise BundleError(
                f"{path}: rater {m.rater_id!r} has no assignment in study {m.study_id!r}"
            )
        if project.db.execute(
            "SELECT 1 FROM bundle_imports WHERE sha256 = ?", [b.sha256]
        ).fetchone():
            return MergeReport(path, m.study_id, m.rater_id, already_imported=True)
        work = b.payload(WorkPayload)
        scope = {a.video_id: a.case_id for a in assigned}
        incoming = _to_lead(work, project.project_id, m.study_id, m.rater_id, scope, path)
        items = work_items(incoming)
        db = project.db
        with write(db):
            current = work_items(read_work(db, m.rater_id, scope))
            base, why = _base(db, m.study_id, m.rater_id, work, path)
            plan = plan_merge(current, items, base, scope, why=why)
            plan.conflicts.extend(outside_conflicts(db, m.rater_id, scope, plan))
            report = MergeReport(
                path,
                m.study_id,
                m.rater_id,
                added=plan.added,
                updated=plan.updated,
                removed=len(plan.removes),
                unchanged=plan.unchanged,
                kept=plan.kept,
                conflicts=tuple(plan.conflicts),
            )
            if plan.conflicts:
                raise MergeConflictError(report)
            check_gate_rules(current, plan, project.annotations.gate_mode(), where=path)
            apply_merge(db, m.rater_id, scope, plan, incoming)
            summary = {
                "created_at": m.created_at,
                "export_id": work.export_id,
                "ancestors": work.ancestors,
                "items": items,
                "added": plan.added,
                "updated": plan.updated,
                "removed": len(plan.removes),
            }
            db.table("bundle_imports").insert(
                {
                    "sha256": b.sha256,
                    "study_id": m.study_id,
                    "rater_id": m.rater_id,
                    "kind": "work",
                    "summary": json.dumps(summary),
                    "imported_at": now(),
                }
            )
            st.set_status(m.study_id, m.rater_id, incoming.videos, "returned")
    return report


def _base(
    db: Any, study_id: str, rater_id: str, work: WorkPayload, path: Path
) -> tuple[dict[str, Any] | None, str]:
    """The items of the last import of this rater's work, and what a conflict then means."""
    row = db.execute(
        "SELECT summary FROM bundle_imports WHERE study_id = ? AND rater_id = ? AND kind = 'work' "
        "ORDER BY imported_at DESC, rowid DESC LIMIT 1",
        [study_id, rater_id],
    ).fetchone()
    if row is None:
        return None, "already in this project, not from this rater's bundles"
    last = json.loads(row[0])
    if last["export_id"] in work.ancestors:
        return dict(last["items"]), "changed in this project since the rater's last import"
    if work.export_id in last["ancestors"]:
        raise BundleError(
            f"{path}: is older than work already imported from this rater (exported before "
            f"the bundle of {last['created_at']}); nothing was imported"
        )
    # Neither builds on the other: two copies of the rater project went their own ways.
    return None, "differs from work imported from another copy of the rater's project"


def _to_lead(
    work: WorkPayload,
    project_id: str,
    study_id: str,
    rater_id: str,
    scope: dict[str, str],
    path: Path,
) -> WorkPayload:
    """Case tokens back to the lead's case ids; every video must be one assigned to the rater."""
    cases = {case_token(project_id, study_id, c): c for c in set(scope.values())}
    for token in work.plans:
        if token not in cases:
            raise BundleError(
                f"{path}: has a plan for case {token}, which is not among "
                f"{rater_id}'s cases in study {study_id}"
            )
    for vid, v in work.videos.items():
        if vid not in scope:
            raise BundleError(
                f"{path}: has work on video {vid}, which is not assigned to "
                f"{rater_id} in study {study_id}"
            )
        if cases.get(v.case) != scope[vid]:
            raise BundleError(f"{path}: video {vid} is filed under the wrong case ({v.case})")
    return WorkPayload(
        export_id=work.export_id,
        ancestors=work.ancestors,
        plans={cases[t]: plan for t, plan in work.plans.items()},
        videos={
            vid: v.model_copy(update={"case": cases[v.case]}) for vid, v in work.videos.items()
        },
    )
