"""Executor semantics in the symbolic mode (spec C.6.16, B.3): accept, reject, carry over."""

from __future__ import annotations

from sim.symbolic import SymbolicWorld
from sim.world import Anomaly, Placement, SceneInfo, parse_command
from tests.sim.fakescene import layout


def _world(info: SceneInfo) -> SymbolicWorld:
    lay = layout(
        Placement("brick_red", at=(0.0, 0.1)),
        Placement("brick_blue", at=(0.0, -0.1)),
        Placement("mug_red", inside="drawer"),
        Placement("pan", on="burner"),
        Placement("patty", at=(-0.1, 0.2)),
        drawer={"open": 0.0},
        burner={"on": False},
    )
    w = SymbolicWorld(info, lay, delta=0.5)
    w.reset(seed=3)
    return w


def _run(w: SymbolicWorld, said: str) -> bool:
    verdict = w.submit(parse_command(said))
    while w.busy:
        w.tick()
    return verdict.accepted


def test_rejected_action_changes_nothing_and_lists_checks(info: SceneInfo) -> None:
    w = _world(info)
    before, snap = w.state_hash(), w.snapshot()
    verdict = w.submit(parse_command("put the red brick on the blue brick"))
    assert not verdict.accepted
    assert [c.name for c in verdict.failed] == ["holding"]
    assert w.state_hash() == before and w.snapshot() == snap
    verdict = w.submit(parse_command("pick up the red mug"))
    assert [c.name for c in verdict.failed] == ["not_visible"]
    assert w.state_hash() == before


def test_accepted_action_changes_the_hash_and_applies_effects(info: SceneInfo) -> None:
    w = _world(info)
    before = w.state_hash()
    assert _run(w, "pick up the red brick")
    assert w.state_hash() != before
    assert w.graph.held() == "brick_red"
    assert _run(w, "stack the red brick on the blue brick")
    assert w.graph.holds("on", "brick_red", "brick_blue") and w.graph.held() is None


def test_plan_prefix_persists_when_a_later_step_fails(info: SceneInfo) -> None:
    w = _world(info)
    assert _run(w, "pick up the red brick")
    assert _run(w, "put the red brick on the blue brick")
    h = w.state_hash()
    assert not _run(w, "put the red brick on the table")  # not holding it any more
    assert w.graph.holds("on", "brick_red", "brick_blue")
    assert w.state_hash() == h


def test_opening_reveals_and_closing_hides(info: SceneInfo) -> None:
    w = _world(info)
    assert not w.graph.nodes["mug_red"].visible
    assert _run(w, "open the drawer")
    assert w.graph.is_open("drawer") and w.graph.nodes["mug_red"].visible
    assert _run(w, "pick up the red mug")
    assert _run(w, "close the drawer") is False  # hand not empty
    assert _run(w, "put the red mug on the table")
    assert _run(w, "close the drawer")
    assert not w.graph.is_open("drawer")


def test_cooking_needs_a_pan_on_a_burner_that_is_on(info: SceneInfo) -> None:
    w = _world(info)
    assert _run(w, "pick up the patty") and _run(w, "put the patty in the pan")
    for _ in range(5):
        w.tick()
    assert w.graph.nodes["patty"].attrs["cooked"] == 0.0
    assert _run(w, "turn on the burner")
    for _ in range(40):
        w.tick()
    assert float(w.graph.nodes["patty"].attrs["cooked"]) >= 1.0


def test_anomalies_change_the_graph(info: SceneInfo) -> None:
    w = _world(info)
    assert _run(w, "pick up the red brick") and _run(w, "put the red brick on the blue brick")
    w.inject(Anomaly("displace", "brick_red", offset=(0.15, 0.0, -0.048)))
    assert not w.graph.holds("on", "brick_red", "brick_blue")
    assert w.graph.holds("on", "brick_red", "table")
    w.inject(Anomaly("remove", "brick_blue"))
    assert "brick_blue" not in w.graph.nodes
    w.inject(Anomaly("drift", "brick_red", velocity=(0.01, 0.0)))
    x = w.graph.nodes["brick_red"].pos[0]
    for _ in range(10):
        w.tick()
    assert abs(w.graph.nodes["brick_red"].pos[0] - (x + 0.05)) < 1e-9


def test_snapshot_restore_reproduces_hashes(info: SceneInfo) -> None:
    w = _world(info)
    w.submit(parse_command("pick up the red brick"))
    w.tick()
    snap = w.snapshot()
    hashes = []
    for said in ("", "put the red brick on the blue brick"):
        if said:
            w.submit(parse_command(said))
        for _ in range(8):
            w.tick()
            hashes.append(w.state_hash())
    w.restore(snap)
    again = []
    for said in ("", "put the red brick on the blue brick"):
        if said:
            w.submit(parse_command(said))
        for _ in range(8):
            w.tick()
            again.append(w.state_hash())
    assert again == hashes
