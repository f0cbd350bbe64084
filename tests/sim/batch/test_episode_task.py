"""A batch episode's task needs no project: prepared where the project is, run with the project
moved away and its files laid out as a cluster node has them (flat, named by sha256), its
result plain picklable data that the holder commits later, linked to its run, replayable."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sim.batch import EPISODE_KIND, parse_manifest, prepare_episode, queue_batch
from sim.episode import add_arm, replay_episode
from sim.interact import replay_interactive
from storage import Project, RemoteTask
from tests.sim.episode.test_arm_profiles import NAMES, lab_arm


class _Quiet:
    """A channel nobody listens to and nobody cancels."""

    def progress(self, fraction: float, note: str = "", cost_usd: float | None = None) -> None:
        pass

    def event(self, event: Any) -> None:
        pass

    def cancelled(self) -> bool:
        return False


def _prepare(p: Project, job: int) -> RemoteTask:
    ctx: Any = SimpleNamespace(payload=p.jobs.get(job).payload)
    task = prepare_episode(ctx, p)
    assert isinstance(task, RemoteTask)
    return task


def test_the_episode_task_runs_with_the_project_away(tmp_path: Path) -> None:
    from sim.scenario import shipped

    scenario = tmp_path / "mine.json"  # a scenario file of this machine: sent by its hash
    shutil.copy(shipped()["stack-two"], scenario)
    m = parse_manifest({
        "format": "workbench-batch/1", "name": "away", "mode": "physics", "arm": "lab-six",
        "scenarios": [str(scenario)], "personas": ["novice"], "assistants": ["oracle"],
        "agents": ["scripted"],
    })  # fmt: skip
    root = tmp_path / "p"
    with Project.create(root) as p:
        add_arm(p, "lab-six", lab_arm(tmp_path / "lab"), trials=0, root=tmp_path / "lab",
                **NAMES)  # fmt: skip
        batch_id, jobs = queue_batch(p, m)
        tasks = [_prepare(p, job) for job in jobs]
    sent = [pickle.loads(pickle.dumps(t.inputs)) for t in tasks]  # plain data, as sent
    assert tasks[0].files == tasks[1].files  # the same scenario file and arm
    assert set(tasks[0].files) == {"scenario"} | {
        f"arm/{rel}" for rel in ("arm/lab-arm.xml", "arm/parts/defaults.xml", "meshes/marker.obj")
    } | {f"arm/textures/{face}.png" for face in ("right", "left", "up", "down", "front", "back")}
    cache = tmp_path / "node-cache"  # as a node has them: flat, by hash
    cache.mkdir()
    files = {}
    for name, (sha, path) in tasks[0].files.items():
        shutil.copyfile(path, cache / sha)
        files[name] = cache / sha
    away = root.rename(tmp_path / "away")  # nothing may read the project while episodes run
    fn = tasks[0].fn
    results = [pickle.loads(pickle.dumps(fn(inputs, files, _Quiet()))) for inputs in sent]
    assert not root.exists()
    away.rename(root)
    with Project.open(root) as p:
        for job, inputs, result in zip(jobs, sent, results, strict=True):
            with p.transaction():  # as the worker does: in the transaction that ends the job
                ref = _prepare(p, job).finish(result).write(p)
            assert ref is not None and ref.startswith("sim_episodes:")
            episode_id = ref.removeprefix("sim_episodes:")
            cell = p.batches.cell(batch_id, inputs["cell"]["cell"], inputs["cell"]["run"])
            assert cell.episode_id == episode_id
            ep = p.episodes.get(episode_id)
            assert (ep.config["source"], ep.config["arm"]) == (str(scenario), "lab-six@1")
            report = (replay_interactive if ep.config.get("interactive") else replay_episode)(
                p, episode_id
            )
            assert report.identical
        assert {j.kind for j in p.jobs.query()} == {EPISODE_KIND}
        assert p.batches.status(batch_id)["stored"] == 2
