"""Belief store and executor semantics (C.6.16): belief is the agent's, the world is the world's."""

from __future__ import annotations

import pytest

from sim.contracts import (
    UNKNOWN,
    Belief,
    Delta,
    Fact,
    Region,
    RegionAnchor,
    RegionObservation,
    Retention,
)
from sim.world import Verb, apply, check
from tests.sim.contracts.scenes import act, kitchen, pick_place, run_plan

COUNTER = Region("counter", frozenset({"table"}))
DRAWER = Region("drawer_inside", frozenset({"drawer"}))


# -- executor rows ---------------------------------------------------------------------------


def test_accepted_action_changes_the_world_hash_and_has_its_effects() -> None:
    g = kitchen()
    verdict = check(g, act(Verb.PICK, "bun"))
    assert verdict.accepted
    after = apply(g, verdict)
    assert after.semantic_digest() != g.semantic_digest()
    assert after.holds("held", "bun", "gripper") and not after.holds("on", "bun", "table")


def test_rejected_action_leaves_the_world_identical_and_lists_the_failed_checks() -> None:
    g = kitchen()
    final, verdicts, events, _ = run_plan(g, [act(Verb.PLACE, "bun", "plate")])
    assert not verdicts[0].accepted
    assert [c.name for c in verdicts[0].failed] == ["holding"]
    assert final.semantic_digest() == g.semantic_digest() and final == g
    assert events == []


def test_later_failure_does_not_roll_back_earlier_accepted_steps() -> None:
    plan = [act(Verb.PICK, "bun"), act(Verb.PLACE, "bun", "plate"), act(Verb.PLACE, "bun", "plate")]
    final, verdicts, events, _ = run_plan(kitchen(), plan)
    assert [v.accepted for v in verdicts] == [True, True, False]
    assert final.holds("on", "bun", "plate") and not final.holds("held", "bun", "gripper")
    assert [e.verb for e in events] == ["pick", "place"]


@pytest.mark.parametrize(
    ("policy", "kept"), [("persistent", True), ("reset_at_group_boundary", False)]
)
def test_task_boundary_carries_the_world_and_keeps_belief_iff_persistent(
    policy: Retention, kept: bool
) -> None:
    world, verdicts, _, _ = run_plan(kitchen(), pick_place("bun", "plate"))
    belief = Belief(policy)
    for v in verdicts:
        belief = belief.on_accepted(v)
    assert belief.location("bun") == "plate"
    after = belief.group_boundary()  # a task boundary is also a group boundary
    assert after.remembers("bun") is kept
    next_task, *_ = run_plan(world, [act(Verb.PICK, "cheese")])
    assert next_task.holds("on", "bun", "plate")  # the world persisted into the next task


def test_group_boundary_under_reset_empties_belief_and_leaves_the_world() -> None:
    world, verdicts, _, _ = run_plan(kitchen(), [act(Verb.OPEN, "drawer"), act(Verb.PICK, "bun")])
    belief = Belief("reset_at_group_boundary")
    for v in verdicts:
        belief = belief.on_accepted(v)
    assert belief.states["drawer"].value == "open"
    before = world.semantic_digest()
    assert belief.group_boundary().empty
    assert world.semantic_digest() == before


def test_rejected_actions_do_not_correct_belief() -> None:
    _, verdicts, _, _ = run_plan(kitchen(), [act(Verb.PLACE, "bun", "plate")])
    belief = Belief().on_accepted(verdicts[0])
    assert belief == Belief()


# -- observations: the delta wins ------------------------------------------------------------


def test_removal_in_the_delta_overrides_the_image() -> None:
    obs = RegionObservation(
        COUNTER, "img_counter", frozenset({"bun", "plate"}), Delta(removed=frozenset({"bun"}))
    )
    belief = Belief().observe(obs)
    assert belief.location("bun") == UNKNOWN  # absent here, destination not observed
    assert belief.locations["bun"] == Fact(UNKNOWN, "delta:counter", absent_from="counter")
    assert belief.locations["plate"] == Fact("counter", "image:img_counter")
    assert belief.conflicts == 1


def test_destination_is_known_only_once_observed() -> None:
    initial = kitchen()
    moved, *_ = run_plan(
        initial, [act(Verb.OPEN, "drawer"), *pick_place("mug_red", "drawer", "in")]
    )
    counter = RegionAnchor.capture(COUNTER, "img_counter", initial)
    drawer = RegionAnchor.capture(DRAWER, "img_drawer", initial)
    belief = Belief().observe(counter.query(initial, moved))
    assert "mug_red" in counter.visible and "mug_red" in counter.query(initial, moved).delta.removed
    assert belief.location("mug_red") == UNKNOWN
    belief = belief.observe(drawer.query(initial, moved))
    assert belief.location("mug_red") == "drawer"
    assert belief.states["drawer"].value == "open"


def test_removal_keeps_a_location_known_to_be_elsewhere() -> None:
    initial = kitchen()
    moved, verdicts, *_ = run_plan(
        initial, [act(Verb.OPEN, "drawer"), *pick_place("mug_red", "drawer", "in")]
    )
    belief = Belief()
    for v in verdicts:
        belief = belief.on_accepted(v)
    belief = belief.observe(RegionAnchor.capture(COUNTER, "img", initial).query(initial, moved))
    assert belief.location("mug_red") == "drawer"


def test_repeated_region_query_reuses_the_image_with_an_updated_delta() -> None:
    initial = kitchen()
    anchor = RegionAnchor.capture(COUNTER, "img_counter_0", initial)
    first = anchor.query(initial, initial)
    later, *_ = run_plan(initial, pick_place("bun", "plate"))
    second = anchor.query(initial, later)
    assert first.image_id == second.image_id == "img_counter_0"
    assert first.visible == second.visible
    assert first.delta == Delta()
    assert second.delta.located == {"bun": "plate"}
    assert second.delta.removed == frozenset()


# -- visual query trigger --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("visible", "remembered", "query"),
    [(True, True, False), (True, False, False), (False, True, False), (False, False, True)],
)
def test_visual_query_only_when_neither_visible_nor_remembered(
    visible: bool, remembered: bool, query: bool
) -> None:
    belief = Belief(locations={"scissors": Fact("drawer", "action:place")} if remembered else {})
    shown = {"scissors"} if visible else {"plate"}
    assert belief.needs_visual_query("scissors", shown) is query


def test_unknown_location_is_not_remembered() -> None:
    belief = Belief(locations={"scissors": Fact(UNKNOWN, "delta:counter", "counter")})
    assert belief.needs_visual_query("scissors", set())
