"""The per-scenario capability table: reach and grasp of what each reference needs, and the
reference's dry run. The predictions must agree with physics: a few here (the script that
compares all 14 scenarios for both arms takes minutes)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from sim.episode import capability_table, open_scenarios
from sim.mujoco import LAB7, WB6, ArmSpec, scenario_capability
from sim.scenario import BoundScenario, ScenarioError


def _one(name: str) -> BoundScenario:
    return open_scenarios([name])[0]


def test_lab7_cannot_grasp_the_patty_and_says_how_wide_it_is() -> None:
    cap = scenario_capability(LAB7, _one("patty-in-pan"))
    assert not cap.can
    assert [g.obj for g in cap.grasps] == ["patty"]
    patty = cap.grasps[0]
    assert not patty.ok and patty.width == pytest.approx(0.07, abs=0.002)
    assert re.fullmatch(
        r"no grasp: patty 7\.0 cm, jaws open \d+\.\d cm( \(the approach needs 1\.5 cm to spare\))?",
        patty.why,
    ), patty.why
    assert cap.why == [patty.why]
    # the arm reaches every pose all the same: re-planned with wide-enough jaws
    assert cap.poses > 0 and cap.reached == cap.poses
    assert [s.command for s in cap.steps] == ["pick up the patty", "put the patty in the pan"]


def test_wb6_can_do_what_lab7_cannot_and_both_can_stack() -> None:
    for name in ("patty-in-pan", "fetch-mug", "stack-three"):
        assert scenario_capability(WB6, _one(name)).can, name
    assert not scenario_capability(LAB7, _one("fetch-mug")).can
    stack = scenario_capability(LAB7, _one("stack-three"))
    assert stack.can and stack.reached == stack.poses
    assert [g.obj for g in stack.grasps] == ["brick_red", "brick_green"]
    drawer = scenario_capability(WB6, _one("mug-in-drawer"))
    assert {g.obj for g in drawer.grasps} == {"drawer handle", "mug_red"}


def _short_reach(folder: Path) -> ArmSpec:
    """wb6 with its base and forearm roll confined to +-0.5 rad: the table's sides are out."""
    xml = WB6.mjcf.read_text().replace('range="-2.9 2.9"/>', 'range="-0.5 0.5"/>')
    path = folder / "narrow.xml"
    path.write_text(xml)
    return dataclasses.replace(WB6, mjcf=path)


def test_an_unreachable_pose_is_predicted_and_physics_agrees(tmp_path: Path) -> None:
    narrow = _short_reach(tmp_path)
    table = capability_table(narrow, open_scenarios(["box-in-bin,stack-two"]), run=True)
    box, stack = table.rows
    assert not box.can and box.reached < box.poses
    assert box.why[0].startswith("pick up the box: no grasp: unreachable"), box.why
    assert stack.can
    assert [r.mode for r in box.runs] == ["symbolic", "physics"]
    assert box.runs[0].success  # the plan is right; this arm cannot carry it out
    phys = box.physics
    assert phys is not None and not phys.success and "unreachable" in phys.why
    assert stack.physics is not None and stack.physics.success
    assert box.agrees and stack.agrees
    assert table.to_json()["agree"] == 2 and table.messages == ()


def test_lab7_dry_run_of_patty_in_pan_is_refused_as_predicted() -> None:
    table = capability_table(LAB7, [_one("patty-in-pan")], run=True)
    (cap,) = table.rows
    phys = cap.physics
    assert phys is not None and not phys.success
    assert phys.why.startswith("pick up the patty: refused: the arm cannot: no grasp")
    assert cap.agrees is True


def test_scenario_names_are_checked() -> None:
    assert len(open_scenarios(["all"])) == 14
    assert [b.name for b in open_scenarios(["stack-two, restack", "stack-two"])] == [
        "stack-two",
        "restack",
    ]
    with pytest.raises(ScenarioError, match="'stack-fve' is neither a shipped scenario"):
        open_scenarios(["stack-fve"])
    with pytest.raises(ScenarioError, match="'all' already means every shipped scenario"):
        open_scenarios(["all", "stack-two"])
