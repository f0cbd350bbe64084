"""Every shipped scenario: admitted, its physics reference replays hash for hash, and a fork
from the middle tick with the same decisions reproduces the rest (issue 5, Done when)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.episode import admit_scenario, fork_episode, open_scenario, replay_episode, run_episode
from sim.scenario import shipped
from storage import Project

NAMES = sorted(shipped())


def test_at_least_twelve_across_three_families() -> None:
    families = {open_scenario(n).scenario.family for n in NAMES}
    assert len(NAMES) >= 12 and families == {"kitchen", "tidy", "stack"}


@pytest.mark.parametrize("name", NAMES)
def test_contract_admitted(name: str) -> None:
    report = admit_scenario(open_scenario(name))
    assert report.admitted, "\n".join(report.describe())
    assert {c.name for c in report.checks} >= {
        "reference_passes", "initial_fails", "negative:partial", "repeated_replay",
        "invalid_action_immutability",
    }  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_reference_replays_and_forks_reproduce_every_hash(tmp_path: Path, name: str) -> None:
    bound = open_scenario(name)
    with Project.create(tmp_path / "p") as project:
        ep = run_episode(bound, mode="physics", project=project, reference=True)
        result = ep.runner.result
        assert result is not None and result.status == "completed" and result.success, (
            [(a.action.describe(), a.verdict and a.verdict.reason, a.outcome)
             for a in ep.runner.actions]
        )  # fmt: skip
        assert ep.episode_id is not None
        stored = project.episodes.get(ep.episode_id)
        assert stored.t_ref == result.ticks and stored.reference

        report = replay_episode(project, ep.episode_id)
        assert report.identical and report.compared == result.ticks + 1

        middle = result.ticks // 2
        fork = fork_episode(project, ep.episode_id, middle)
        assert fork.episode_id is not None
        original = project.episodes.ticks(ep.episode_id, start=middle + 1)
        forked = project.episodes.ticks(fork.episode_id)
        assert [t.tick for t in forked] == [t.tick for t in original]
        assert [t.state_hash for t in forked] == [t.state_hash for t in original]
        assert project.episodes.get(fork.episode_id).parent_id == ep.episode_id
