"""Annotations: plans, answers, evidence, validation, undo/redo on the stored history."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from annotation import Answer, GateMode, GateRuleError
from storage import AnnotationError, Project, import_cases

R = "ann"


@pytest.fixture
def project(tmp_path: Path, cases_dir: Path) -> Iterator[Project]:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        yield p


def video(p: Project) -> str:
    return p.videos("stack_blocks")[0].id


def test_plan_answers_and_live_score(project: Project) -> None:
    a = project.annotations
    s1 = a.add_subgoal(
        "stack_blocks", R, source="red block", target="blue plate", action="place on"
    )
    s2 = a.add_subgoal("stack_blocks", R, source="blue plate", action="push", requires=[s1.id])
    v = video(project)
    for gate in ("T1", "T2", "T3", "P1", "P2", "P3", "P4"):
        a.set_answer(v, R, s1.id, gate, Answer.PASS)
    a.set_answer(v, R, s2.id, "T1", Answer.FAIL)
    live = a.live_score(v, "stack_blocks", R)
    assert not live.provisional
    assert live.score.t100 == pytest.approx(50.0) and live.score.p100 == 100.0
    assert live.score.coverage == 0.5  # S2 is unattempted (t = 0)
    # the plan belongs to the case: another video of the same case sees it too
    other = project.videos("stack_blocks")[1].id
    assert [s.label for s in a.plan("stack_blocks", R)] == ["S1", "S2"]
    assert a.live_score(other, "stack_blocks", R).provisional


def test_validation_rejects_and_changes_nothing(project: Project) -> None:
    a = project.annotations
    s1 = a.add_subgoal("stack_blocks", R, source="red block", action="place")
    with pytest.raises(AnnotationError, match="more than one"):
        a.add_subgoal("stack_blocks", R, source="cup", action="put", target="box and bin")
    with pytest.raises(AnnotationError, match="earlier subgoals"):
        a.update_subgoal(s1.id, R, requires=[s1.id])  # no self/forward references
    with pytest.raises(GateRuleError, match="only at P1"):
        a.set_answer(video(project), R, s1.id, "P2", Answer.NA)
    with pytest.raises(AnnotationError, match="needs a source"):
        a.add_subgoal("stack_blocks", R, source=" ", action="place")
    assert len(a.plan("stack_blocks", R)) == 1
    assert project.history.undo_label(R) == "Add subgoal S1"


def test_undo_redo_roundtrip(project: Project) -> None:
    a, h = project.annotations, project.history
    v = video(project)
    s1 = a.add_subgoal("stack_blocks", R, source="red block", action="place")
    a.set_answer(v, R, s1.id, "T1", Answer.PASS)
    a.set_answer(v, R, s1.id, "T1", Answer.FAIL)
    mark = a.add_evidence(v, R, start_frame=2, end_frame=5, subgoal_id=s1.id, gate="T1")
    assert h.undo(R) == "Mark evidence 2–5 for S1"
    assert a.evidence(v, R) == []
    assert h.undo(R) == "T1 fail for S1"
    assert a.answers(v, R)[s1.id]["T1"] is Answer.PASS
    assert h.redo(R) == "T1 fail for S1"
    assert a.answers(v, R)[s1.id]["T1"] is Answer.FAIL
    assert h.redo(R) is not None
    assert [m.id for m in a.evidence(v, R)] == [mark.id]
    assert h.redo(R) is None


def test_new_change_discards_redo_branch(project: Project) -> None:
    a, h = project.annotations, project.history
    a.add_subgoal("stack_blocks", R, source="a", action="x")
    h.undo(R)
    assert h.redo_label(R) == "Add subgoal S1"
    a.add_subgoal("stack_blocks", R, source="b", action="y")
    assert h.redo_label(R) is None


def test_delete_subgoal_cascades_and_undo_restores(project: Project) -> None:
    a, h = project.annotations, project.history
    v = video(project)
    s1 = a.add_subgoal("stack_blocks", R, source="lid", action="open", enabling=True)
    s2 = a.add_subgoal("stack_blocks", R, source="cup", action="put in", requires=[s1.id])
    a.set_answer(v, R, s1.id, "T1", Answer.PASS)
    a.add_evidence(v, R, start_frame=0, end_frame=3, subgoal_id=s1.id, gate="T1")
    a.delete_subgoal(s1.id, R)
    plan = a.plan("stack_blocks", R)
    assert [(s.label, s.requires) for s in plan] == [("S1", ())]
    assert a.answers(v, R) == {} and a.evidence(v, R) == []
    h.undo(R)
    plan = a.plan("stack_blocks", R)
    assert [s.label for s in plan] == ["S1", "S2"] and plan[1].requires == (s1.id,)
    assert a.answers(v, R)[s1.id]["T1"] is Answer.PASS
    assert len(a.evidence(v, R)) == 1 and plan[1].id == s2.id


def test_undo_is_per_rater_and_survives_reopen(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        p.annotations.add_subgoal("stack_blocks", "alice", source="a", action="x")
        p.annotations.add_subgoal("stack_blocks", "bob", source="b", action="y")
    with Project.open(tmp_path / "p") as p:
        assert p.history.undo("alice") == "Add subgoal S1"
        assert p.annotations.plan("stack_blocks", "alice") == []
        assert len(p.annotations.plan("stack_blocks", "bob")) == 1


def _state(p: Project) -> tuple[object, ...]:
    rows = p.db.execute("SELECT * FROM gate_decisions ORDER BY id").fetchall()
    return tuple(map(tuple, rows)), p.history.undo_label(R)


def test_storage_refuses_answers_the_rubric_forbids(project: Project) -> None:
    """A script (or any caller) meets the same gate rules as the gates panel."""
    a = project.annotations
    v = video(project)
    s1 = a.add_subgoal("stack_blocks", R, source="red block", action="place")
    a.set_answer(v, R, s1.id, "T1", Answer.PASS)
    a.set_answer(v, R, s1.id, "T2", Answer.FAIL)
    before = _state(project)
    with pytest.raises(GateRuleError, match="T3 not reached: T2 was answered no"):
        a.set_answer(v, R, s1.id, "T3", Answer.PASS)
    with pytest.raises(GateRuleError, match="P2 not reached: P1 is not answered yet"):
        a.set_answer(v, R, s1.id, "P2", Answer.PASS)
    assert _state(project) == before  # the refused T3 and P2 wrote nothing, no history entry
    s2 = a.add_subgoal("stack_blocks", R, source="cup", action="lift")
    a.set_answer(v, R, s2.id, "T1", Answer.FAIL)
    before = _state(project)
    with pytest.raises(GateRuleError, match="P1 cannot be answered: T1 was answered no"):
        a.set_answer(v, R, s2.id, "P1", Answer.PASS)
    assert _state(project) == before  # nothing written, no history entry


def test_a_no_clears_the_answers_it_leaves_unreached_and_undo_restores_them(
    project: Project,
) -> None:
    a, h = project.annotations, project.history
    v = video(project)
    s1 = a.add_subgoal("stack_blocks", R, source="red block", action="place")
    for gate in ("T1", "T2", "T3", "P1", "P2"):
        a.set_answer(v, R, s1.id, gate, Answer.PASS)
    a.set_answer(v, R, s1.id, "T2", Answer.FAIL)
    assert a.answers(v, R)[s1.id] == {
        "T1": Answer.PASS, "T2": Answer.FAIL, "P1": Answer.PASS, "P2": Answer.PASS
    }  # fmt: skip
    assert h.undo_label(R) == "T2 fail for S1 (clears T3)"
    a.set_answer(v, R, s1.id, "T1", Answer.FAIL)
    assert a.answers(v, R)[s1.id] == {"T1": Answer.FAIL}  # t = 0: physics unattempted
    assert h.undo(R) == "T1 fail for S1 (clears T2, P1, P2)"
    assert h.undo(R) == "T2 fail for S1 (clears T3)"
    assert a.answers(v, R)[s1.id]["T3"] is Answer.PASS
    # clearing an earlier gate only pauses the walk: the later answers stay
    a.set_answer(v, R, s1.id, "T1", None)
    assert set(a.answers(v, R)[s1.id]) == {"T2", "T3", "P1", "P2"}


def test_record_all_mode_stores_every_gate(project: Project) -> None:
    """Pilot mode (spec §9 item 9): gates after a "no" are asked too, for the rubric ablation."""
    a = project.annotations
    v = video(project)
    assert a.gate_mode() is GateMode.GATED
    a.set_gate_mode(GateMode.RECORD_ALL)
    s1 = a.add_subgoal("stack_blocks", R, source="red block", action="place")
    a.set_answer(v, R, s1.id, "T1", Answer.FAIL)
    a.set_answer(v, R, s1.id, "T3", Answer.PASS)
    a.set_answer(v, R, s1.id, "T2", Answer.PASS)
    assert a.answers(v, R)[s1.id] == {"T1": Answer.FAIL, "T2": Answer.PASS, "T3": Answer.PASS}
    with pytest.raises(GateRuleError, match="physics is unattempted"):
        a.set_answer(v, R, s1.id, "P1", Answer.PASS)
    assert a.live_score(v, "stack_blocks", R).score.t100 == 0  # scored sequentially all the same
    with pytest.raises(AnnotationError, match="gate mode"):
        a.set_gate_mode("sometimes")  # type: ignore[arg-type]
