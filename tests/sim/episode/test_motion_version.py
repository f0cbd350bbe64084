"""A physics episode records the arm-motion version it ran with; one recorded under another
version is refused by replay and fork with the reason, not reported as diverging at some tick."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.episode import fork_episode, open_scenario, replay_episode, run_episode
from sim.mujoco import MOTION_VERSION
from sim.scenario import shipped
from storage import EpisodeError, Project


def test_an_episode_from_another_motion_version_is_refused_by_name(tmp_path: Path) -> None:
    name = sorted(n for n in shipped() if open_scenario(n).scenario.family == "stack")[0]
    with Project.create(tmp_path / "p") as project:
        ep = run_episode(open_scenario(name), mode="physics", project=project, reference=True)
        assert ep.episode_id is not None
        assert project.episodes.get(ep.episode_id).config["motion"] == MOTION_VERSION
        assert replay_episode(project, ep.episode_id).identical
        project.db.execute(
            "UPDATE sim_episodes SET config_json = json_set(config_json, '$.motion', 1) "
            "WHERE id = ?",
            [ep.episode_id],
        )
        project.db.conn.commit()
        with pytest.raises(EpisodeError, match=r"recorded with arm motion v1; .* run its scenario"):
            replay_episode(project, ep.episode_id)
        with pytest.raises(EpisodeError, match="arm motion v1"):
            fork_episode(project, ep.episode_id, 3)
