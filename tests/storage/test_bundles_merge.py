"""The three-way merge, item by item (current = lead, incoming = bundle, base = last import)."""

from __future__ import annotations

from storage._bundle_merge import plan_merge

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
