"""Demonstrations come back from LeRobot and robomimic files as episodes of a project (their
scene graphs perceived again from the recorded MuJoCo states), and go to the rubric as human
videos of a case; what cannot be used is refused by name and nothing is stored."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from sim.episode import open_scenario
from sim.review import load_timeline
from sim.teleop import (
    DemoFileError,
    Demonstration,
    Recorder,
    export_lerobot,
    export_robomimic,
    import_demonstrations,
    list_demonstrations,
    load_demonstration,
    rate_demonstrations,
    store_demonstration,
)
from storage import Project
from tests.sim.teleop.operator import Operator, pick_and_place


@pytest.fixture(scope="module")
def demo() -> Demonstration:
    rec = Recorder(open_scenario("stack-two"), "wb6", cameras=("front",), size=(160, 120))
    rec.start()
    pick_and_place(Operator(rec.teleop, rec.step), "brick_red", "brick_blue")
    (done,) = rec.stop()
    rec.close()
    assert done.success
    return done


@pytest.mark.parametrize("fmt", ["lerobot", "robomimic"])
def test_an_exported_demonstration_comes_back_as_an_episode(
    demo: Demonstration, fmt: str, tmp_path: Path
) -> None:
    out = tmp_path / ("lr" if fmt == "lerobot" else "rm.hdf5")
    (export_lerobot if fmt == "lerobot" else export_robomimic)([demo], out)
    with Project.create(tmp_path / "p") as p:
        (eid,) = import_demonstrations(p, fmt, out)
        back = load_demonstration(p, eid)
        assert np.array_equal(back.states, demo.states)
        assert np.allclose(back.joint_pos, demo.joint_pos)
        # the graphs are perceived again from the states: exactly what was recorded
        assert back.graphs == demo.graphs
        tl = load_timeline(p, eid)
        assert tl.graphs.graph_at(back.steps - 1).held() is None
        assert [holds for _text, holds, _since in tl.contract_at(back.steps - 1)] == [True]
        assert [e.id for e in list_demonstrations(p)] == [eid]


def test_states_from_another_scene_are_refused_and_nothing_is_stored(
    demo: Demonstration, tmp_path: Path
) -> None:
    wrong = dataclasses.replace(demo, states=demo.states[:, :-3])
    out = tmp_path / "rm.hdf5"
    export_robomimic([wrong], out)
    with Project.create(tmp_path / "p") as p:
        with pytest.raises(
            DemoFileError, match=r"states have .* values a step.*recorded elsewhere"
        ):
            import_demonstrations(p, "robomimic", out)
        assert p.episodes.list() == []


def test_a_demonstration_is_rated_as_a_human_video_of_its_scenario(
    demo: Demonstration, tmp_path: Path
) -> None:
    with Project.create(tmp_path / "p") as p:
        eid = store_demonstration(p, demo)
        report = rate_demonstrations(p, [eid])
        assert report.cases_added == ["demo-stack-two"]
        (video,) = p.videos("demo-stack-two")
        assert video.role.value == "human-success"
        assert p.video_index(video).frame_count == demo.steps
        again = rate_demonstrations(p, [eid])
        assert not again.changed  # the same video: nothing added twice
        blind = store_demonstration(p, dataclasses.replace(demo, frames={}))
        with pytest.raises(DemoFileError, match="no 'front' video was recorded"):
            rate_demonstrations(p, [blind])
