"""Replay reports the first tick whose state hash differs from the recorded one."""

from __future__ import annotations

from pathlib import Path

from sim.episode import open_scenario, replay_episode, run_episode
from storage import Project


def test_replay_names_the_first_divergent_tick(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        ep = run_episode(open_scenario("stack-two"), mode="symbolic", project=project)
        assert ep.episode_id is not None
        assert replay_episode(project, ep.episode_id).identical
        # a recording that does not match what the world does from tick 17 on
        recorded = project.episodes.hashes(ep.episode_id)
        project.db.execute(
            "UPDATE sim_ticks SET state_hash = 'tampered' WHERE episode_id = ? AND tick >= 17",
            [ep.episode_id],
        )
        project.db.conn.commit()
        report = replay_episode(project, ep.episode_id)
        assert not report.identical
        assert report.first_divergent == 17
        assert (report.expected, report.got) == ("tampered", recorded[17])
