"""The Ray driver on a local cluster (2 CPUs, loopback), with the diagnostic remote kind
``diag.task``: jobs done exactly once and where they ran said; each file sent once; at most
N tasks in flight; a cancelled job's task stopped and its result dropped; a Ray worker killed
by its PID retried within the job's attempts; a key only by name, in no Ray log, object or
project file; a node without the key refused; and the install hint without Ray."""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storage import ClusterUnavailableError, JobStatus, Project, run_worker
from storage.jobs._ray_driver import connect, import_ray

pytestmark = pytest.mark.slow
KEY_NAME = "WB_TEST_RAY_KEY"
KEY = "sk-ray-test-" + os.urandom(6).hex()


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    """One local cluster for the module, started with the key in the environment (as a node
    started by `ray start` with the key set would have it)."""
    os.environ[KEY_NAME] = KEY
    ray = connect("local", cpus=2)
    yield ray
    ray.shutdown()
    os.environ.pop(KEY_NAME, None)


def _project(root: Path, payloads: list[dict[str, Any]], **enqueue: Any) -> list[int]:
    with Project.create(root) as p:
        return p.jobs.enqueue("diag.task", payloads, **enqueue)


def _results(root: Path) -> dict[int, dict[str, Any]]:
    import json

    with Project.open(root) as p:
        jobs = p.jobs.query()
    assert all(j.status is JobStatus.DONE for j in jobs), [(j.id, j.status, j.error) for j in jobs]
    return {j.id: json.loads(j.result_ref.removeprefix("task:")) for j in jobs if j.result_ref}


def test_jobs_run_once_on_the_cluster_and_say_where(ray: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    ids = _project(root, [{"n": k, "env": KEY_NAME, "events": 2} for k in range(6)])
    logs: list[dict[str, Any]] = []
    stats = run_worker(root, ray="local", concurrency=4, drain=True, log=logs.append)
    assert (stats.claimed, stats.done, stats.failed) == (6, 6, 0)
    results = _results(root)
    assert sorted(results) == ids and [results[i]["n"] for i in ids] == list(range(6))
    assert all(r["env_set"] for r in results.values())  # the key reached every task
    assert all(r["pid"] != os.getpid() for r in results.values())  # run by Ray workers
    with Project.open(root) as p:
        where = {j.ran_on for j in p.jobs.query()}
    (node,) = where
    assert node.count("/") == 1 and len(node.split("/")[1]) == 8  # host/node-id


def test_each_file_goes_to_the_object_store_once(ray: Any, tmp_path: Path) -> None:
    from storage import import_cases
    from tests.casefactory import make_case

    root = tmp_path / "p"
    make_case(tmp_path / "cases", "one", n_videos=1)
    with Project.create(root) as p:
        import_cases(p, tmp_path / "cases")
        (video,) = p.videos()
        sha = video.media
        p.db.execute("DELETE FROM jobs")  # the import's own scan jobs, if any
        p.jobs.enqueue("diag.task", [{"n": k, "files": {"clip": sha}} for k in range(5)])
    logs: list[dict[str, Any]] = []
    run_worker(root, ray="local", concurrency=3, drain=True, log=logs.append)
    puts = [r for r in logs if r.get("event") == "ray.object_put"]
    assert [r["sha256"] for r in puts] == [sha]  # five jobs, one put
    assert {r["files"]["clip"] for r in _results(root).values()} == {sha}  # each read it whole


def test_at_most_n_tasks_in_flight(ray: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    _project(root, [{"n": k, "seconds": 0.6, "cpus": 0.5} for k in range(6)])  # room for 4
    run_worker(root, ray="local", concurrency=2, drain=True, log=lambda _r: None)
    spans = sorted((r["began"], r["ended"]) for r in _results(root).values())
    most = max(sum(1 for b, e in spans if b <= t < e) for t, _ in spans)
    assert most == 2  # the driver's limit, though the cluster had room for four


def test_a_cancelled_job_stops_its_task_and_its_result_is_dropped(ray: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    (job,) = _project(root, [{"n": 1, "seconds": 60}])
    stop = threading.Event()
    options = {"ray": "local", "stop": stop, "log": lambda _r: None}
    worker = threading.Thread(target=run_worker, args=(root,), kwargs=options)
    worker.start()
    try:
        with Project.open(root) as p:
            deadline = time.monotonic() + 60
            while p.jobs.get(job).ran_on is None or "/" not in (p.jobs.get(job).ran_on or ""):
                assert time.monotonic() < deadline, "the task never started"
                time.sleep(0.1)
            started = time.monotonic()
            assert p.jobs.cancel([job]) == 1
            while p.jobs.get(job).status is not JobStatus.CANCELLED:
                time.sleep(0.05)
        time.sleep(1.0)
    finally:
        stop.set()
        worker.join(60)
    assert time.monotonic() - started < 30  # far sooner than its 60 s
    with Project.open(root) as p:
        j = p.jobs.get(job)
    assert j.status is JobStatus.CANCELLED and j.result_ref is None


def test_a_killed_ray_worker_is_retried_and_nothing_is_lost(ray: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    pids = tmp_path / "pids"
    pids.mkdir()
    ids = _project(root, [{"n": k, "seconds": 1.5, "pid_file": str(pids / f"{k}-{time.time_ns()}")}
                          for k in range(4)], max_attempts=3, retry_backoff_s=0.1)  # fmt: skip
    out: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: out.update(stats=run_worker(
        root, ray="local", concurrency=2, drain=True, log=lambda _r: None)))  # fmt: skip
    worker.start()
    deadline = time.monotonic() + 60
    while not list(pids.glob("0-*")):
        assert time.monotonic() < deadline, "no task started"
        time.sleep(0.05)
    victim = int(next(pids.glob("0-*")).read_text())
    os.kill(victim, signal.SIGKILL)
    worker.join(120)
    assert not worker.is_alive()
    results = _results(root)
    assert sorted(results) == ids  # every job done, each exactly once
    assert sorted(r["n"] for r in results.values()) == [0, 1, 2, 3]
    assert out["stats"].retried >= 1 and out["stats"].done == 4
    with Project.open(root) as p:
        assert p.jobs.get(ids[0]).attempts == 2  # the killed attempt, then the one that finished
    assert results[ids[0]]["pid"] != victim


def test_the_key_is_in_no_ray_log_object_or_project_file(ray: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    _project(root, [{"n": k, "env": KEY_NAME} for k in range(3)])
    run_worker(root, ray="local", concurrency=2, drain=True, log=lambda _r: None)
    assert all(r["env_set"] for r in _results(root).values())
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    leaks = [p for p in session.rglob("*") if p.is_file() and KEY.encode() in _read(p)]
    assert leaks == []
    with Project.open(root) as p:
        payloads = [j.payload for j in p.jobs.query()]
    assert KEY.encode() not in pickle.dumps(payloads)
    assert not [p for p in root.rglob("*") if p.is_file() and KEY.encode() in _read(p)]


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # sockets and vanished temp files
        return b""


def test_a_node_without_the_key_is_refused_for_good(ray: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    _project(root, [{"n": 1, "env": "WB_NOT_SET_ANYWHERE"}])
    stats = run_worker(root, ray="local", drain=True, log=lambda _r: None)
    assert stats.failed == 1 and stats.retried == 0
    with Project.open(root) as p:
        (j,) = p.jobs.query()
    assert "has no $WB_NOT_SET_ANYWHERE in its environment" in (j.error or "")


def test_without_ray_the_message_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(
        ClusterUnavailableError, match=r"pip install 'rollout-workbench\[cluster\]'"
    ):
        import_ray()


def test_a_restarted_cluster_in_the_same_process_works(ray: Any, tmp_path: Path) -> None:
    """A second cluster in one process (tests, a GUI that reconnects) must not be handed the
    first cluster's mailbox actor: using a dead cluster's handle aborts the process."""
    for k, root in enumerate((tmp_path / "first", tmp_path / "second")):
        if k:
            ray.shutdown()
            connect("local", cpus=2)
        _project(root, [{"n": k}])
        stats = run_worker(root, ray="local", drain=True, log=lambda _r: None)
        assert stats.done == 1 and _results(root)[1]["n"] == k
