"""The symbolic world's trace path does per tick only the work for what changed.

The state hash is the SHA-256 of the snapshot's canonical JSON. Re-encoding every node every
tick was most of a recorded tick's cost, though a tick usually changes one node (cooking) or
none; nodes are immutable, so each is encoded once. These tests count encodings and check that
the shortcut text is byte for byte the JSON it replaces, at every tick of a faulted run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from sim.symbolic import SymbolicWorld
from sim.world import (
    Anomaly,
    GraphDiff,
    Node,
    Placement,
    SceneGraph,
    SceneInfo,
    diff,
    parse_command,
)
from tests.sim.fakescene import layout


@pytest.fixture
def world(info: SceneInfo) -> SymbolicWorld:
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


@pytest.fixture
def encodings(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Ids of the nodes encoded to JSON, in order."""
    seen: list[str] = []
    original = Node.to_json

    def counting(self: Node) -> dict[str, object]:
        seen.append(self.id)
        return original(self)

    monkeypatch.setattr(Node, "to_json", counting)
    yield seen


def _run(w: SymbolicWorld, said: str) -> None:
    assert w.submit(parse_command(said)).accepted
    while w.busy:
        w.tick()


def test_idle_ticks_encode_no_node(world: SymbolicWorld, encodings: list[str]) -> None:
    world.state_hash()
    encodings.clear()
    hashes = set()
    for _ in range(20):
        world.tick()
        hashes.add(world.state_hash())
    assert encodings == []
    assert len(hashes) == 20  # the tick is part of the state: each hash is new all the same


def test_cooking_ticks_encode_only_the_cooking_node(
    world: SymbolicWorld, encodings: list[str]
) -> None:
    _run(world, "pick up the patty")
    _run(world, "put the patty in the pan")
    _run(world, "turn on the burner")
    world.state_hash()
    encodings.clear()
    for _ in range(10):
        world.tick()
        world.state_hash()
    assert encodings == ["patty"] * 10


def _canonical(w: SymbolicWorld) -> str:
    return hashlib.sha256(json.dumps(w.snapshot(), sort_keys=True).encode()).hexdigest()[:16]


def test_hash_and_graph_text_are_the_plain_json_at_every_tick(world: SymbolicWorld) -> None:
    steps = [
        "pick up the red brick",
        "put the red brick on the blue brick",
        "open the drawer",
        "pick up the patty",
        "put the patty in the pan",
        "turn on the burner",
    ]
    faults = {
        3: Anomaly("drift", "brick_blue", velocity=(0.01, 0.02)),
        9: Anomaly("flip", "brick_red"),
        15: Anomaly("displace", "mug_red", offset=(0.1, 0.0, 0.02)),
        22: Anomaly("remove", "brick_red"),
    }
    before = world.graph
    for t in range(60):
        if t in faults:
            world.inject(faults[t])
        if not world.busy and steps:
            world.submit(parse_command(steps.pop(0)))
        assert world.state_hash() == _canonical(world)  # pending action included
        world.tick()
        g = world.graph
        assert g.to_json_text() == json.dumps(g.to_json(), sort_keys=True)
        assert world.state_hash() == _canonical(world)
        assert diff(before, g) == _plain_diff(before, g)
        before = g
    assert not steps


def _plain_diff(before: SceneGraph, after: SceneGraph) -> GraphDiff:
    """``diff`` against copies that share no node or set: the full comparison, no shortcut."""
    copied = {k: replace(n) for k, n in after.nodes.items()}
    return diff(before, after.replace(nodes=copied, relations=set(after.relations)))
