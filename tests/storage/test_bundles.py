"""A whole study through offline bundles between separate project folders (issue: "done when").

Lead → three raters on "three machines" (three folders), calibration first, then production;
their work merges back under the right lead video ids; importing again changes nothing; a lead
edit that the rater's next bundle contradicts, and two diverging copies of a rater project, are
conflicts that change nothing; other raters' rows are never touched.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation import Answer
from storage import (
    BundleError,
    BundleOrigin,
    MergeConflictError,
    Project,
    bundle_origin,
    export_assignment,
    export_work,
    import_cases,
    import_work,
    open_assignment,
)
from tests.storage import test_studies
from tests.storage.test_studies import CALIBRATION_CASE, DOMAINS, annotate

study_cases = test_studies.study_cases  # the shared session fixture

RATERS = ("ann", "bob", "cy")
WORK_TABLES = ("subgoal_plans", "subgoals", "ratings", "gate_decisions", "evidence_marks")


def dump(p: Project) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (the whole project state)."""
    return {
        t: sorted(map(tuple, p.db.execute(f"SELECT * FROM [{t}]").fetchall()), key=repr)
        for t in p.db.table_names()
    }


def rows_of(p: Project, rater: str) -> dict[str, list[tuple[Any, ...]]]:
    """The rows that hold one rater's work."""
    q = {
        "subgoal_plans": "SELECT * FROM subgoal_plans WHERE rater_id = ?",
        "subgoals": "SELECT s.* FROM subgoals s JOIN subgoal_plans p ON p.id = s.plan_id "
        "WHERE p.rater_id = ?",
        "ratings": "SELECT * FROM ratings WHERE rater_id = ?",
        "gate_decisions": "SELECT g.* FROM gate_decisions g JOIN ratings r ON r.id = g.rating_id "
        "WHERE r.rater_id = ?",
        "evidence_marks": "SELECT e.* FROM evidence_marks e JOIN ratings r ON r.id = e.rating_id "
        "WHERE r.rater_id = ?",
    }
    return {t: sorted(map(tuple, p.db.execute(sql, [rater]).fetchall())) for t, sql in q.items()}


def work_view(p: Project, rater: str, video_id: str) -> dict[str, Any]:
    """A rater's work on a video, independent of row ids (comparable across projects)."""
    ann = p.annotations
    case = p.video(video_id).case_id
    plan = ann.plan(case, rater)
    pos = {s.id: s.position for s in plan}
    answers = ann.answers(video_id, rater)
    rating = ann.rating(video_id, rater)
    return {
        "plan": [(s.source, s.target, s.action, [pos[r] for r in s.requires]) for s in plan],
        "answers": {pos[k]: {g: a.value for g, a in v.items()} for k, v in answers.items()},
        "evidence": [
            (pos.get(m.subgoal_id or 0), m.gate, m.start_frame, m.end_frame, m.box, m.note)
            for m in ann.evidence(video_id, rater)
        ],
        "holistic": (rating.holistic_task, rating.holistic_physics) if rating else None,
        "score": ann.live_score(video_id, case, rater),
    }


def _answer_production(rp: Project, rater: str, k: int) -> None:
    for i, a in enumerate(a for a in rp.studies.assignments("pilot", rater) if not a.calibration):
        t = (i + k) % 4
        annotate(rp, rater, a.video_id, [t], ["NA" if i % 3 == 2 else (i + k) % 5])
        if i == 0:
            sg = rp.annotations.plan(a.case_id, rater)[0]
            rp.annotations.add_evidence(
                a.video_id,
                rater,
                start_frame=1,
                end_frame=3,
                subgoal_id=sg.id,
                gate="T1",
                box=(0.1, 0.1, 0.5, 0.5),
                note=f"{rater} saw it",
            )
            rp.annotations.set_holistic(a.video_id, rater, task=2, physics=3.5)


@pytest.fixture
def study(tmp_path: Path, study_cases: Path) -> Iterator[tuple[Project, dict[str, Path]]]:
    """A lead project whose three raters finished calibration and production via bundles."""
    lead = Project.create(tmp_path / "lead")
    import_cases(lead, study_cases)
    st = lead.studies
    for r in RATERS:
        st.add_rater(r, r.title())
    st.create("pilot", raters_per_video=2, seed=5)
    calib = [v.id for v in lead.videos(CALIBRATION_CASE)][:2]
    st.set_calibration("pilot", {v: {"task": [3], "physics": [4], "notes": "clean"} for v in calib})
    st.build_panel("pilot", per_domain=1, seed=3, domains=list(DOMAINS))
    st.assign("pilot", RATERS, seed=9)
    folders = {r: tmp_path / f"machine-{r}" for r in RATERS}
    for k, r in enumerate(RATERS):
        first = export_assignment(lead, "pilot", r, tmp_path / f"{r}-calibration.wbz")
        assert first.calibration_only and first.videos == 2
        open_assignment(first.path, folders[r])
        with Project.open(folders[r]) as rp:
            assert bundle_origin(rp) == BundleOrigin(lead.project_id, "pilot", r)
            for a in rp.studies.assignments("pilot", r):
                assert a.calibration
                annotate(rp, r, a.video_id, [3], [4])
            export_work(rp, tmp_path / f"{r}-work1.wbz")
        import_work(lead, tmp_path / f"{r}-work1.wbz")
        assert st.calibration_report("pilot", r).passed
        assert st.complete_calibration("pilot", r).passed
        second = export_assignment(lead, "pilot", r, tmp_path / f"{r}-full.wbz")
        assert not second.calibration_only
        opened = open_assignment(second.path, folders[r])  # the same rater folder grows
        assert opened.videos_added == second.videos - 2
        with Project.open(folders[r]) as rp:
            _answer_production(rp, r, k)
            export_work(rp, tmp_path / f"{r}-work2.wbz")
        report = import_work(lead, tmp_path / f"{r}-work2.wbz")
        assert report.added > 0 and not report.conflicts and not report.already_imported
    yield lead, folders
    lead.close()


def test_full_study_round_trip(study: tuple[Project, dict[str, Path]], tmp_path: Path) -> None:
    lead, folders = study
    st = lead.studies
    for r in RATERS:
        assigned = st.assignments("pilot", r)
        assert {a.status for a in assigned} == {"returned"}
        with Project.open(folders[r]) as rp:
            mine = rp.studies.assignments("pilot", r)
            assert [a.video_id for a in mine] == [a.video_id for a in assigned]  # same order
            for a in mine:
                assert work_view(lead, r, a.video_id) == work_view(rp, r, a.video_id)
    assert st.status("pilot")["ann"]["calibration"] == "passed"

    # importing the same bundle again changes nothing at all
    before = dump(lead)
    again = import_work(lead, tmp_path / "ann-work2.wbz")
    assert again.already_imported and not again.changed
    assert dump(lead) == before

    # a later bundle that only adds work merges cleanly and touches nobody else's rows
    others = {r: rows_of(lead, r) for r in ("ann", "cy")}
    with Project.open(folders["bob"]) as rp:
        last = [a for a in rp.studies.assignments("pilot", "bob") if not a.calibration][-1]
        rp.annotations.set_holistic(last.video_id, "bob", task=1, physics=None)
        rp.annotations.add_evidence(last.video_id, "bob", start_frame=0, end_frame=2)
        export_work(rp, tmp_path / "bob-work3.wbz")
    more = import_work(lead, tmp_path / "bob-work3.wbz")
    assert (more.added, more.updated, more.removed, more.conflicts) == (2, 0, 0, ())
    assert lead.annotations.rating(last.video_id, "bob").holistic_task == 1  # type: ignore[union-attr]
    assert {r: rows_of(lead, r) for r in ("ann", "cy")} == others


def test_lead_edit_then_contradicting_bundle_is_a_conflict(
    study: tuple[Project, dict[str, Path]], tmp_path: Path
) -> None:
    lead, folders = study
    video = next(a for a in lead.studies.assignments("pilot", "ann") if not a.calibration)
    sg = lead.annotations.plan(video.case_id, "ann")[0]
    lead_answer = lead.annotations.answers(video.video_id, "ann")[sg.id]["T1"]
    flipped = Answer.FAIL if lead_answer is Answer.PASS else Answer.PASS
    lead.annotations.set_answer(video.video_id, "ann", sg.id, "T1", flipped)  # the lead edits
    with Project.open(folders["ann"]) as rp:
        rsg = rp.annotations.plan(rp.video(video.video_id).case_id, "ann")[0]
        rp.annotations.set_answer(video.video_id, "ann", rsg.id, "T1", Answer.UNRESOLVED)
        rp.annotations.set_holistic(video.video_id, "ann", task=0, physics=None)  # clean change
        export_work(rp, tmp_path / "ann-work3.wbz")
    before = dump(lead)
    with pytest.raises(MergeConflictError) as err:
        import_work(lead, tmp_path / "ann-work3.wbz")
    conflicts = err.value.report.conflicts
    assert [c.item for c in conflicts] == [f"{video.video_id} S1 T1"]
    assert conflicts[0].lead == {"answer": flipped.value, "note": ""}
    assert conflicts[0].bundle == {"answer": "unresolved", "note": ""}
    assert "since the rater's last import" in str(err.value) and "nothing was imported" in str(
        err.value
    )
    assert dump(lead) == before  # nothing overwritten, nothing half-merged


def test_diverging_copies_of_a_rater_project_conflict(
    study: tuple[Project, dict[str, Path]], tmp_path: Path
) -> None:
    lead, folders = study
    copy = tmp_path / "machine-cy-copy"
    shutil.copytree(folders["cy"], copy)
    video = next(a for a in lead.studies.assignments("pilot", "cy") if not a.calibration)

    def set_t1(folder: Path, answer: Answer, out: str) -> None:
        with Project.open(folder) as rp:
            sg = rp.annotations.plan(rp.video(video.video_id).case_id, "cy")[0]
            rp.annotations.set_answer(video.video_id, "cy", sg.id, "T1", answer)
            export_work(rp, tmp_path / out)

    set_t1(folders["cy"], Answer.UNRESOLVED, "cy-a.wbz")
    set_t1(folders["cy"], Answer.FAIL, "cy-b.wbz")
    set_t1(copy, Answer.PASS, "cy-copy.wbz")
    assert import_work(lead, tmp_path / "cy-b.wbz").updated >= 1  # the rater revised: clean
    before = dump(lead)
    with pytest.raises(BundleError, match="is older than work already imported"):
        import_work(lead, tmp_path / "cy-a.wbz")
    with pytest.raises(MergeConflictError, match="another copy of the rater's project") as err:
        import_work(lead, tmp_path / "cy-copy.wbz")
    assert f"{video.video_id} S1 T1" in {c.item for c in err.value.report.conflicts}
    assert dump(lead) == before


def test_rater_restructures_plan_and_lead_only_work_is_kept(
    study: tuple[Project, dict[str, Path]], tmp_path: Path
) -> None:
    lead, folders = study
    prod = [a for a in lead.studies.assignments("pilot", "bob") if not a.calibration]
    # the lead adds a mark of its own under bob on a video bob left without evidence
    mark = lead.annotations.add_evidence(prod[1].video_id, "bob", start_frame=4, end_frame=5)
    with Project.open(folders["bob"]) as rp:
        case = rp.video(prod[0].video_id).case_id
        sg = rp.annotations.add_subgoal(case, "bob", source="cup", action="lift")
        rp.annotations.add_subgoal(case, "bob", source="cup", action="put", requires=[sg.id])
        rp.annotations.delete_subgoal(rp.annotations.plan(case, "bob")[0].id, "bob")
        export_work(rp, tmp_path / "bob-work3.wbz")
    report = import_work(lead, tmp_path / "bob-work3.wbz")
    assert not report.conflicts and report.updated >= 1 and report.removed >= 1
    assert report.kept == 1 and mark in lead.annotations.evidence(prod[1].video_id, "bob")
    with Project.open(folders["bob"]) as rp:
        for a in rp.studies.assignments("pilot", "bob"):
            if a.video_id != prod[1].video_id:
                assert work_view(lead, "bob", a.video_id) == work_view(rp, "bob", a.video_id)
    plan = lead.annotations.plan(prod[0].case_id, "bob")
    assert [(s.action, s.requires) for s in plan][-2:] == [("lift", ()), ("put", (plan[-2].id,))]
