"""Batch episodes on a local Ray cluster (2 CPUs, loopback): the same batches run by a local
worker and by the Ray driver give the same episodes, state hash for state hash, each planned
run stored once and the node that ran it said; the episodes replay; LLM participants get their
profile with the task and their key only from the node's environment; and a Ray worker killed
by its PID mid-batch loses and duplicates nothing (its job runs again)."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.batch import parse_manifest, queue_batch
from sim.episode import add_arm, replay_episode
from sim.interact import replay_interactive
from sim.scenario import shipped
from storage import JobStatus, Project, run_worker
from storage.jobs._ray_driver import connect
from tests.sim.episode.test_arm_profiles import NAMES, lab_arm

pytestmark = pytest.mark.slow
TIMES: dict[str, float] = {}  # measured seconds, printed at the end (run with -s to see them)
KEY_NAME = "TEST_EPISODE_RAY_KEY"  # not WB_: the autouse fixture clears those
KEY = "sk-episode-ray-" + os.urandom(6).hex()


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    """One local cluster for the module, started with the key in the environment (as a node
    started by `ray start` with the key set has it)."""
    os.environ[KEY_NAME] = KEY
    ray = connect("local", cpus=2)
    yield ray
    ray.shutdown()
    os.environ.pop(KEY_NAME, None)
    for name, seconds in TIMES.items():
        print(f"{name}: {seconds:.2f} s")


def _manifest(mode: str, scenarios: list[str], **over: Any) -> Any:
    return parse_manifest({
        "format": "workbench-batch/1", "name": f"ray-{mode}", "mode": mode,
        "scenarios": scenarios, "personas": ["novice"], "assistants": ["oracle"],
        "agents": ["scripted"], "runs": 2, **over,
    })  # fmt: skip


def _project(root: Path, manifest: Any, arm: Path | None = None, **queue: Any) -> str:
    """A project with the batch queued (and the lab's arm profile, when given)."""
    with Project.create(root) as p:
        if arm is not None:
            add_arm(p, "lab-six", arm, trials=0, root=arm.parent.parent, **NAMES)  # lab/
        batch_id, _jobs = queue_batch(p, manifest, **queue)
    return batch_id


def _run(root: Path, label: str, n: int, **ray: Any) -> None:
    """Run the queue to its end; every one of its ``n`` jobs must be done."""
    start = time.perf_counter()
    stats = run_worker(root, concurrency=2, drain=True, log=lambda _r: None, **ray)
    TIMES[label] = time.perf_counter() - start
    with Project.open(root) as p:
        errors = [(j.id, j.error) for j in p.jobs.query() if j.error]
    assert (stats.done, stats.failed, errors) == (n, 0, [])


def _episodes(root: Path, batch_id: str) -> dict[tuple[int, int], tuple[str, list[str]]]:
    """(cell, run) -> (episode id, its state hashes), checking each run is stored once."""
    with Project.open(root) as p:
        cells = p.batches.cells(batch_id)
        ids = [c.episode_id for c in cells]
        assert None not in ids and len(set(ids)) == len(cells)
        assert {e.id for e in p.episodes.list(reference=False)} == set(ids)
        jobs = p.jobs.query()
        assert all(j.status is JobStatus.DONE for j in jobs), [(j.id, j.error) for j in jobs]
        assert len(jobs) == len(cells)
        return {(c.cell, c.run): (str(c.episode_id), p.episodes.hashes(str(c.episode_id)))
                for c in cells}  # fmt: skip


@pytest.mark.parametrize("mode", ["symbolic", "physics"])
def test_a_batch_on_ray_equals_the_local_run_episode_for_episode(
    ray: Any, tmp_path: Path, mode: str
) -> None:
    import socket

    arm = None
    if mode == "physics":  # a lab's arm profile (includes, a mesh, a cube texture in folders
        scenarios = ["stack-two"]  # of their own): its files go to the cluster by hash
        arm = lab_arm(tmp_path / "lab")
        over: dict[str, Any] = {"arm": "lab-six"}
    else:  # a shipped scenario, and one from a file of this machine (sent by its hash)
        mine = tmp_path / "mine.json"
        shutil.copy(shipped()["stack-two"], mine)
        scenarios, over = ["cook-patty", str(mine)], {}
    manifest = _manifest(mode, scenarios, **over)
    local, remote = tmp_path / "local", tmp_path / "ray"
    ids = {root: _project(root, manifest, arm) for root in (local, remote)}
    n = 2 * (len(scenarios) * 2)  # runs x (scenarios x (the assistant's cell, the agent's))
    _run(local, f"{mode} batch of {n}, local worker (2 threads)", n)
    _run(remote, f"{mode} batch of {n}, Ray driver (2 CPUs)", n, ray="local")
    here, there = _episodes(local, ids[local]), _episodes(remote, ids[remote])
    assert sorted(here) == sorted(there)
    for key in here:
        assert len(here[key][1]) > 1
        assert here[key][1] == there[key][1], f"cell/run {key}: the state hashes differ"
    node = f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()[:8]}"
    with Project.open(local) as p:
        assert {j.ran_on for j in p.jobs.query()} == {socket.gethostname()}
    with Project.open(remote) as p:
        assert {j.ran_on for j in p.jobs.query()} == {node}
        for c in p.batches.cells(ids[remote]):  # what the Ray tasks made replays here
            ep = p.episodes.get(str(c.episode_id))
            if mode == "physics":
                assert ep.config["arm"] == "lab-six@1"
            report = (replay_interactive if ep.config.get("interactive") else replay_episode)(
                p, ep.id
            )
            assert report.identical, (c.cell, c.run, report)
        sources = {p.episodes.get(str(c.episode_id)).config["source"]
                   for c in p.batches.cells(ids[remote])}  # fmt: skip
    assert sources == ({"stack-two"} if mode == "physics" else {"cook-patty", str(mine)})


def test_llm_participants_get_their_profile_and_their_key_only_by_name(
    ray: Any, tmp_path: Path
) -> None:
    import socket
    from types import SimpleNamespace

    from judge import ModelProfile, save_profile
    from judge.models.loopback import FakeServer, Reply
    from sim.batch import prepare_episode
    from storage import Profiles, RemoteTask
    from tests.judge.llm_participant_helpers import assistant_script

    manifest = _manifest("symbolic", ["cook-patty"], agents=[
        {"name": "tool-agent", "kind": "llm", "options": {"profile": "agent"}}],
        assistants=[{"name": "asst", "kind": "llm", "options": {"profile": "asst"}}])  # fmt: skip
    roots = {"local": tmp_path / "local", "ray": tmp_path / "ray"}
    done = [Reply("submit", {"claim": "done"})] * 4  # the agent gives up at once, each run
    with FakeServer(assistant_script(), expected_key=KEY) as asst, \
            FakeServer(done, expected_key=KEY) as agent:  # fmt: skip
        ids = {}
        for name, root in roots.items():
            with Project.create(root) as p:
                for who, srv in (("asst", asst), ("agent", agent)):
                    save_profile(Profiles(p.db), ModelProfile(
                        name=who, base_url=srv.base_url, model="fake-model",
                        api_key_env=KEY_NAME, max_retries=0))  # fmt: skip
                ids[name], jobs = queue_batch(p, manifest)
                if name == "ray":  # what a task is sent: the profiles, the key's name only
                    ctx: Any = SimpleNamespace(payload=p.jobs.get(jobs[0]).payload)
                    task = prepare_episode(ctx, p)
                    assert isinstance(task, RemoteTask) and task.env == (KEY_NAME,)
                    assert task.inputs["profiles"]["asst"]["base_url"] == asst.base_url
                    assert KEY.encode() not in pickle.dumps(dict(task.inputs))
        for name, root in roots.items():
            _run(root, f"llm batch of 4, {name}", 4, **({"ray": "local"} if name == "ray" else {}))
        assert len(agent.chat_requests) == 4 and len(asst.chat_requests) > 20
        assert {r.authorization for r in [*asst.chat_requests, *agent.chat_requests]} == {
            f"Bearer {KEY}"
        }
    here, there = _episodes(roots["local"], ids["local"]), _episodes(roots["ray"], ids["ray"])
    assert {k: v[1] for k, v in here.items()} == {k: v[1] for k, v in there.items()}
    node = f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()[:8]}"
    with Project.open(roots["ray"]) as p:
        assert {j.ran_on for j in p.jobs.query()} == {node}
        for c in p.batches.cells(ids["ray"]):  # the model calls are stored with each episode
            assert p.episodes.exchanges(str(c.episode_id))
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    assert not [f for f in session.rglob("*") if f.is_file() and KEY.encode() in _read(f)]
    assert not [f for f in roots["ray"].rglob("*") if f.is_file() and KEY.encode() in _read(f)]


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # sockets and vanished temp files
        return b""


def _executing() -> list[int]:
    """PIDs of Ray worker processes running a task of the driver (Ray titles a worker
    process after the function it runs; an idle one is ``ray::IDLE``)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(b"ray::_execute"):
            out.append(int(entry.name))
    return out


def test_a_killed_ray_worker_loses_and_duplicates_nothing(ray: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    manifest = _manifest("physics", ["stack-two"], runs=3, agents=[])
    batch_id = _project(root, manifest, max_attempts=3, retry_backoff_s=0.1)
    out: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: out.update(stats=run_worker(
        root, ray="local", concurrency=2, drain=True, log=lambda _r: None)))  # fmt: skip
    worker.start()
    victim = None
    try:
        deadline = time.monotonic() + 120
        with Project.open(root) as p:
            while victim is None:  # a task has started on the cluster (it said where)...
                assert time.monotonic() < deadline, "no episode started on the cluster"
                started = [j for j in p.jobs.query(status=JobStatus.RUNNING)
                           if "/" in (j.ran_on or "")]  # fmt: skip
                pids = _executing()  # ...and its worker process is running it
                if started and pids:
                    victim = pids[0]
                else:
                    time.sleep(0.02)
        os.kill(victim, signal.SIGKILL)
    finally:
        worker.join(240)
    assert not worker.is_alive()
    stats = out["stats"]
    assert (stats.done, stats.failed, stats.retried) == (3, 0, 1)
    with Project.open(root) as p:
        cells = p.batches.cells(batch_id)
        ids = [c.episode_id for c in cells]
        assert None not in ids and len(set(ids)) == 3  # every planned run, once
        assert {e.id for e in p.episodes.list(reference=False)} == set(ids)
        attempts = sorted(p.jobs.get(int(str(c.job_id))).attempts for c in cells)
        assert attempts == [1, 1, 2]  # the killed attempt, then the one that stored it
        for c in cells:
            assert p.episodes.get(str(c.episode_id)).status.value == "completed"
