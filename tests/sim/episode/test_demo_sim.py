"""The MuJoCo part of ``workbench demo``: importable cases and replayable episodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.episode import _demo, replay_episode
from sim.episode._demo import SimCase, Variant, write_sim_cases
from sim.world import Anomaly
from storage import Project, import_cases


def test_rollouts_import_as_cases_and_their_episodes_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = (
        SimCase("sim_stack_two", "stack-two", "household_org_storage", (
            Variant("wb-scripted-arm", 1),
            Variant("wb-faulty-sim", 2, Anomaly("remove", "brick_red"), {"held": "brick_red"}),
        )),
    )  # fmt: skip
    monkeypatch.setattr(_demo, "SIM_CASES", short)
    with Project.create(tmp_path / "p") as project:
        folders = write_sim_cases(project, tmp_path / "cases", size=(320, 240))
        assert [f.name for f in folders] == ["sim_stack_two"]
        assert (folders[0] / "initial.png").is_file()
        report = import_cases(project, tmp_path / "cases")
        assert report.cases_added == ["sim_stack_two"] and report.videos_added == 2
        episodes = {e.reference: e for e in project.episodes.list()}
        clean, faulty = episodes[True], episodes[False]
        assert project.episodes.metrics(clean.id)["success"] == 1.0
        assert project.episodes.metrics(faulty.id)["success"] == 0.0
        assert [a.kind for a in project.episodes.anomalies(faulty.id)] == ["remove"]
        # the anomaly is not in the scenario file: the stored schedule makes the replay exact
        assert replay_episode(project, faulty.id).identical
        assert project.case("sim_stack_two").goal == "Put the red brick on the blue brick."
        videos = project.videos("sim_stack_two")
        assert len(videos) == 2
        # stored first by the episode, then imported as a case: still indexed, so it opens
        frames = sorted(project.video_index(v).frame_count for v in videos)
        assert frames == sorted([clean.ticks + 1, faulty.ticks + 1])
