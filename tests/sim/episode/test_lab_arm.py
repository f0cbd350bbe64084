"""A lab's own arm (lab7: 7 joints, other names, two finger actuators) runs the same episodes,
and what that arm physically cannot do is a rejection that changes nothing."""

from __future__ import annotations

from sim.episode import make_world, open_scenario, run_episode
from sim.world import parse_command


def test_lab7_stacks_bricks_through_the_engine() -> None:
    ep = run_episode(open_scenario("stack-two"), mode="physics", arm="lab7")
    result = ep.runner.result
    assert result is not None and result.status == "completed" and result.success


def test_an_object_too_wide_for_the_gripper_is_rejected_without_a_trace() -> None:
    bound = open_scenario("patty-in-pan")
    world = make_world(bound, "physics", arm="lab7")
    try:
        world.reset(bound.scenario.seed)
        before, snap = world.state_hash(), world.snapshot()
        verdict = world.submit(parse_command("pick up the patty"))
        assert not verdict.accepted
        assert [c.name for c in verdict.failed] == ["feasible"]
        assert "too wide" in verdict.reason
        assert world.state_hash() == before and world.snapshot() == snap and not world.busy
    finally:
        world.close()
