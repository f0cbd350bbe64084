"""The world cursor keeps every tick it passed in memory: after prefetching, any seek, in any
order, lands on exactly the recorded state (the stored hash of that tick), as replaying from the
stored snapshots does; with no memory at all it still does."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import sim.review._worlds as worlds
from sim.episode import open_scenario, run_episode
from sim.review import WorldCursor
from storage import Project


@pytest.fixture(scope="module")
def physics_episode(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("memo") / "p"
    with Project.create(root) as p:
        eid = run_episode(open_scenario("stack-two"), mode="physics", project=p).episode_id
    assert eid is not None
    return root, eid


@pytest.mark.parametrize("memo", [worlds.MEMO_TICKS, 0])
def test_seeks_in_any_order_land_on_the_recorded_state(
    physics_episode: tuple[Path, str], memo: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worlds, "MEMO_TICKS", memo)
    root, eid = physics_episode
    with Project.open(root) as p:
        cursor = WorldCursor(p, eid)
    try:
        ticks = cursor.episode.ticks
        steps = 0
        while cursor.prefetch():
            steps += 1
        assert steps == (ticks if memo else 0)  # tick 0 is held from the start
        assert len(cursor._memo) == (ticks + 1 if memo else 0)
        order = list(range(ticks + 1))
        random.Random(3).shuffle(order)
        for t in [*order[:40], ticks, 0, ticks // 2]:
            assert cursor.seek(t) == t
            assert cursor.faithful, t
            assert cursor.world.state_hash() == cursor.expected[t]
    finally:
        cursor.close()
