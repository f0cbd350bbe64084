"""The three-way merge, item by item (current = lead, incoming = bundle, base = last import)."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation import GateMode, GateRuleError
from storage import Project, export_assignment, export_work, import_cases, import_work
from storage.bundles._merge import check_gate_rules, plan_merge
from tests.storage import test_studies
from tests.storage.test_bundles import dump
from tests.storage.test_studies import CALIBRATION_CASE, DOMAINS, annotate

study_cases = test_studies.study_cases  # the shared session fixture
WORK = Path("work.wbz")

SCOPE = {"V1": "c1", "V2": "c1"}
PLAN1 = [{"source": "cup", "action": "lift"}]
PLAN2 = [*PLAN1, {"source": "cup", "action": "put"}]


def g(answer: str) -> dict[str, str]:
    return {"answer": answer, "note": ""}


def test_merge_rules() -> None:
    base = {
        "plan/c1": PLAN2,
        "gate/V1/1/T1": g("pass"),
        "gate/V1/2/T1": g("pass"),
        "gate/V2/1/T1": g("fail"),
    }
    current = base | {"holistic/V2": {"task": 1, "physics": None}}  # the lead added its own
    incoming = base | {"gate/V1/2/T1": g("fail"), "gate/V2/1/T2": g("pass")}
    del incoming["gate/V2/1/T1"]
    plan = plan_merge(current, incoming, base, SCOPE, why="edited")
    assert plan.writes == {"gate/V1/2/T1": g("fail"), "gate/V2/1/T2": g("pass")}
    assert plan.removes == ["gate/V2/1/T1"]  # the rater cleared it; the lead had not touched it
    assert (plan.added, plan.updated, plan.unchanged, plan.kept) == (1, 1, 2, 1)
    assert not plan.conflicts


def test_conflicts_are_items_both_sides_changed() -> None:
    base = {"plan/c1": PLAN1, "gate/V1/1/T1": g("pass")}
    # the lead changed the answer; the bundle still has the old one: the lead's is not the
    # rater's decision, so it is reported (never silently kept under the rater's name)
    plan = plan_merge(base | {"gate/V1/1/T1": g("fail")}, base, base, SCOPE, why="edited")
    assert [str(c) for c in plan.conflicts] == [
        "V1 S1 T1: lead has 'fail', bundle has 'pass' (edited)"
    ]
    # without a base (first import, or a diverging copy) any difference is a conflict
    plan = plan_merge(base, base | {"gate/V1/1/T1": g("unresolved")}, None, SCOPE, why="copy")
    assert [c.item for c in plan.conflicts] == ["V1 S1 T1"]
    # identical values are never conflicts, whatever their history
    assert not plan_merge(base, base, None, SCOPE, why="x").conflicts


def test_a_shrinking_plan_may_not_strand_the_leads_own_decisions() -> None:
    base = {"plan/c1": PLAN2}
    current = base | {"gate/V2/2/T1": g("pass")}  # the lead's own, never imported
    plan = plan_merge(current, {"plan/c1": PLAN1}, base, SCOPE, why="edited")
    assert plan.writes == {"plan/c1": PLAN1}
    assert [c.item for c in plan.conflicts] == ["V2 S2 T1"]
    assert "drops the subgoal" in plan.conflicts[0].why


def test_merged_answers_must_obey_the_gate_rules() -> None:
    base = {"plan/c1": PLAN1, "gate/V1/1/T1": g("pass"), "gate/V1/1/T2": g("fail")}
    plan = plan_merge(base, base | {"gate/V1/1/T3": g("pass")}, base, SCOPE, why="edited")
    assert not plan.conflicts  # a clean merge item by item ...
    # ... but not an answer the rubric refuses
    with pytest.raises(GateRuleError, match="V1 S1 T3: T3 not reached: T2 was answered no"):
        check_gate_rules(base, plan, GateMode.GATED, where=WORK)
    check_gate_rules(base, plan, GateMode.RECORD_ALL, where=WORK)  # a pilot records every gate
    # the lead's own answers count: a bundle's physics answer under a lead-side T1 "no" is refused
    lead = base | {"gate/V1/1/T1": g("fail")}
    del lead["gate/V1/1/T2"]
    plan = plan_merge(lead, lead | {"gate/V1/1/P1": g("pass")}, lead, SCOPE, why="edited")
    with pytest.raises(GateRuleError, match="V1 S1 P1: P1 cannot be answered"):
        check_gate_rules(lead, plan, GateMode.GATED, where=WORK)


def test_a_work_bundle_with_a_forbidden_answer_is_refused_by_name(
    tmp_path: Path, study_cases: Path
) -> None:
    from storage import open_assignment

    with Project.create(tmp_path / "lead") as lead:
        import_cases(lead, study_cases)
        st = lead.studies
        st.add_rater("ann", "Ann")
        st.create("pilot", raters_per_video=1)
        calib = lead.videos(CALIBRATION_CASE)[0].id
        st.set_calibration("pilot", {calib: {"task": [3], "physics": [4], "notes": "clean"}})
        st.build_panel("pilot", per_domain=1, seed=1, domains=list(DOMAINS))
        st.assign("pilot", ["ann"], seed=1)
        st.complete_calibration("pilot", "ann", override_reason="checked in person")
        bundle = export_assignment(lead, "pilot", "ann", tmp_path / "ann.wbz").path
        open_assignment(bundle, tmp_path / "rater")
        with Project.open(tmp_path / "rater") as rp:
            item = rp.studies.assignments("pilot", "ann")[1]
            annotate(rp, "ann", item.video_id, [1], [2])  # T1 yes, T2 no; P1 P2 yes, P3 no
            sg = rp.annotations.plan(item.case_id, "ann")[0]
            # what an older version or a script writing SQL could leave behind: T3 after T2 no
            rating = rp.annotations.rating(item.video_id, "ann")
            assert rating is not None
            rp.db.table("gate_decisions").insert(
                {"rating_id": rating.id, "subgoal_id": sg.id, "gate": "T3", "answer": "pass",
                 "note": "", "updated_at": "2026-01-01T00:00:00"}
            )  # fmt: skip
            work = export_work(rp, tmp_path / "work.wbz").path
        before = dump(lead)
        with pytest.raises(GateRuleError) as e:
            import_work(lead, work)
        assert str(e.value) == (
            f"{work}: {item.video_id} S1 T3: T3 not reached: T2 was answered no; "
            "nothing was imported"
        )
        assert dump(lead) == before  # nothing written, not even the import record
