"""The SQLite sink stores what the engine produced, and stored snapshots fork exactly."""

from __future__ import annotations

import json
from pathlib import Path

from sim.episode import EpisodeRunner, ReplayAgent, ScriptedAgent, SqliteSink
from sim.symbolic import SymbolicWorld
from sim.world import Action, SceneInfo
from storage import Project
from tests.sim.episode.test_runner_symbolic import _bound


def test_episode_rows_match_the_run(tmp_path: Path, info: SceneInfo) -> None:
    bound = _bound(info, anomalies=[{"kind": "drift", "obj": "brick_green",
                                     "velocity": [0.001, 0.0], "at_tick": 3}])  # fmt: skip
    with Project.create(tmp_path / "p") as project:
        sink = SqliteSink(project, agent="scripted", mode="symbolic", reference=True, batch=4)
        world = SymbolicWorld(info, bound.layout, delta=bound.scenario.delta)
        runner = EpisodeRunner(world, bound, ScriptedAgent(bound.reference), sinks=[sink],
                               keyframe_every=5)  # fmt: skip
        runner.run()
        assert runner.result is not None and sink.episode_id is not None
        eid = sink.episode_id
        ep = project.episodes.get(eid[:8])
        assert ep.status.value == runner.result.status and ep.ticks == runner.result.ticks
        assert ep.t_ref == runner.result.ticks and ep.reference
        assert project.episodes.hashes(eid) == runner.hashes
        stored = project.episodes.actions(eid)
        assert [(a.tick, a.accepted, a.outcome) for a in stored] == [
            (a.tick, a.accepted, a.outcome) for a in runner.actions
        ]
        assert [a.kind for a in project.episodes.anomalies(eid)] == ["drift"]
        assert [c.value for c in project.episodes.conditions(eid)] == ["T", "T"]
        assert project.episodes.metrics(eid)["success"] == 1.0
        ticks = project.episodes.ticks(eid)
        assert ticks[0].graph_json is not None and json.loads(ticks[0].graph_json)["tick"] == 0
        assert any(json.loads(t.diff_json).get("added") for t in ticks)

        # fork from a stored snapshot with the same decisions: the rest reproduces
        middle = runner.result.ticks // 2
        snap = project.episodes.snapshot_at_or_before(eid, middle)
        assert snap is not None and 0 < snap[0] <= middle
        decisions = [(a.tick, Action.from_json(json.loads(a.action_json))) for a in stored]
        fork_world = SymbolicWorld(info, bound.layout, delta=bound.scenario.delta)
        fork = EpisodeRunner(fork_world, bound, ReplayAgent(decisions, until=ep.ticks),
                             end_tick=ep.ticks)  # fmt: skip
        fork.restore(json.loads(snap[1]))
        fork.run()
        assert fork.hashes == runner.hashes
