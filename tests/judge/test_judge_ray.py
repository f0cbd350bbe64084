"""``judge.video`` on a local Ray cluster (issue 17): the same jobs, run by the Ray driver, give
the same verdicts, spend and exactly-once results as a local worker; the API key reaches the
tasks only through their environment; a Ray worker killed mid-video costs one retry.

Ray is started once for the module on loopback with 2 CPUs, the key set in this process's
environment beforehand (the raylet and every worker it starts inherit it), and shut down at the
end. The endpoint is the loopback fault server: some calls first get a 500, a dropped
connection or a timeout, and the client's own retries get through. Timing decides only where
the kill lands, never what is asserted.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judge import ModelProfile, queue_judge, save_profile, scripted_judge
from judge.models.loopback import Action, Delay, Drop, FakeServer, Status, body_messages
from judge.video.loopback import wire_responder
from storage import JobStatus, JudgeRuns, Project, import_cases, run_worker

pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray")

# Not a WB_ name: the suite's autouse fixture removes those, and Ray's processes must keep it.
KEY_ENV = "RWB_RAY_TEST_API_KEY"
KEY = f"sk-test-ray-{secrets.token_hex(8)}"
PRICE_IN, PRICE_OUT = 3.0, 15.0
TIMEOUT_S = 0.5


@pytest.fixture(scope="module")
def cluster() -> Iterator[Path]:
    """A local Ray (2 CPUs, loopback) whose processes have the key; yields its session folder."""
    from storage.jobs._ray_driver import connect

    assert not ray.is_initialized(), "another test left Ray running"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, KEY)
        connect("local", cpus=2)
        try:
            yield Path(ray._private.worker._global_node.get_session_dir_path())
        finally:
            ray.shutdown()


def fault_judge(call_s: float = 0.0) -> Callable[[dict[str, Any], int], Action]:
    """Two different verdicts (by the case's goal); the first sending of some requests gets a
    500, a dropped connection or a timeout. Faults are chosen by the request's content, so two
    servers fault the same calls whatever the order the jobs run in."""
    cups = wire_responder(scripted_judge(answers={"T2": "no", "P3": {"S1": "?"}}))
    blocks = wire_responder(scripted_judge(answers={"P1": {"S2": "no"}}))
    seen: set[str] = set()
    lock = threading.Lock()

    def respond(body: dict[str, Any], n: int) -> Action:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with lock:
            first = digest not in seen
            seen.add(digest)
        fault = int(digest[:8], 16) % 10 if first else -1
        if fault == 0:
            return Status(500, retry_after=0.01)
        if fault == 1:
            return Drop()
        if fault == 2:
            return Delay(TIMEOUT_S + 0.3, Status(500))  # the client has given up by then
        texts = " ".join(m.text for m in body_messages(body))
        reply = (cups if "green cup" in texts else blocks)(body, n)
        return Delay(call_s, reply) if call_s else reply

    return respond


def make_project(root: Path, cases_dir: Path, srv: FakeServer, **queue: Any) -> list[int]:
    with Project.create(root) as p:
        import_cases(p, cases_dir)
        save_profile(
            p.profiles,
            ModelProfile(
                name="vlm", base_url=srv.base_url, model="fake-vlm", api_key_env=KEY_ENV,
                timeout_s=TIMEOUT_S, max_retries=3, schema_retries=1,
                price_in_per_mtok=PRICE_IN, price_out_per_mtok=PRICE_OUT,
                max_output_tokens=64, spend_cap_usd=1.0,
            ),
        )  # fmt: skip
        _, ids = queue_judge(p, [v.id for v in p.videos()], profile="vlm", batch="b", **queue)
    return list(ids)


def drain(root: Path, *, on_ray: bool) -> float:
    """Run the queue to the end (a local worker, or the Ray driver); returns the seconds."""
    start = time.monotonic()
    extra: dict[str, Any] = {"ray": "local", "ray_cpus": 2} if on_ray else {}
    run_worker(root, drain=True, concurrency=2, poll_s=0.05, log=lambda _r: None, **extra)
    return time.monotonic() - start


def verdicts(root: Path) -> dict[tuple[str, str], Any]:
    """Per video (its case and file, the same in both projects): the done run's T/P/S and every
    gate answer."""
    out = {}
    with Project.open(root) as p:
        runs = JudgeRuns(p.db)
        for v in p.videos():
            (run,) = [r for r in runs.runs(v.id) if r.status == "done"]
            answers = sorted(
                (row.axis, row.gate, row.sid, row.answer, row.unresolved)
                for gate in runs.trace(run.id).gates
                for row in gate.rows
            )
            out[(v.case_id, v.media)] = (run.t100, run.p100, run.s, answers)
    return out


def recorded_usd(p: Project) -> float:
    return float(p.db.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM judge_calls").fetchone()[0])


def assert_done_once(root: Path, ids: list[int]) -> None:
    with Project.open(root) as p:
        runs = JudgeRuns(p.db)
        for jid in ids:
            job = p.jobs.get(jid)
            assert job.status is JobStatus.DONE, (jid, job.error)
            mine = [r for r in runs.runs(job.payload["video_id"]) if r.job_id == jid]
            (done,) = [r for r in mine if r.status == "done"]
            assert job.result_ref == f"judge_runs:{done.id}"
            assert "running" not in {r.status for r in mine}
            assert job.cost_usd == pytest.approx(sum(r.cost_usd for r in mine), abs=1e-12)


def test_ray_judges_verdict_for_verdict_as_a_local_worker_and_keeps_the_key_out(
    cluster: Path, tmp_path: Path, cases_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ray import cloudpickle

    from storage.jobs import _ray_driver

    sent: list[bytes] = []  # every task's function, inputs, files and env, as Ray pickles them
    run, ref = _ray_driver.RayExecutor._run, _ray_driver._Objects.ref

    def capture_run(self: Any, rec: Any, project: Project, task: Any) -> Any:
        what = (task.fn, dict(task.inputs), dict(task.files), task.env)
        sent.append(cloudpickle.dumps(what))  # type: ignore[no-untyped-call]
        return run(self, rec, project, task)

    def capture_ref(self: Any, sha: str, path: Path) -> Any:
        sent.append(path.read_bytes())
        return ref(self, sha, path)

    monkeypatch.setattr(_ray_driver.RayExecutor, "_run", capture_run)
    monkeypatch.setattr(_ray_driver._Objects, "ref", capture_ref)

    figures, totals, results, auth = {}, {}, {}, set()
    for name, on_ray in (("local", False), ("ray", True)):
        root = tmp_path / name
        with FakeServer(fault_judge(), expected_key=KEY, models={"fake-vlm"}) as srv:
            ids = make_project(root, cases_dir, srv)
            figures[name] = drain(root, on_ray=on_ray)
            billed = srv.billed_usd(PRICE_IN, PRICE_OUT)
            faulted = len(srv.chat_requests) - len(srv.answered)
            auth |= {r.authorization for r in srv.chat_requests}
        assert_done_once(root, ids)
        with Project.open(root) as p:
            jobs = [p.jobs.get(j) for j in ids]
            assert {j.attempts for j in jobs} == {1}  # the client's retries got through
            spend = p.jobs.spend()
            assert spend == pytest.approx(recorded_usd(p), abs=1e-12)
            assert spend == pytest.approx(sum(j.cost_usd for j in jobs), abs=1e-12)
            node = ray.get_runtime_context().get_node_id()[:8]
            on_node = {(j.ran_on or "").endswith("/" + node) for j in jobs}
            assert on_node == {on_ray}, [j.ran_on for j in jobs]  # where it really ran
        assert billed > 0 and spend == pytest.approx(billed, abs=1e-12)  # what was invoiced
        assert faulted >= 2  # the fault server did inject faults
        totals[name], results[name] = spend, verdicts(root)
    assert results["ray"] == results["local"]
    assert len({v[:3] for v in results["local"].values()}) == 2  # two different verdicts
    assert totals["ray"] == pytest.approx(totals["local"], abs=1e-12)
    assert auth == {f"Bearer {KEY}"}  # the key was really used, by both ...
    # ... and is nowhere else: not in what the driver sent, the Ray logs or the project
    assert sent and not [b for b in sent if KEY.encode() in b]
    logs = [f for f in (cluster / "logs").rglob("*") if f.is_file()]
    assert logs and not [f for f in logs if KEY.encode() in f.read_bytes()]
    for name in ("local", "ray"):
        leaked = [f for f in (tmp_path / name).rglob("*") if f.is_file()
                  and KEY.encode() in f.read_bytes()]  # fmt: skip
        assert leaked == []
    print(f"\njudge batch of {len(ids)} videos: local worker {figures['local']:.2f} s, "
          f"Ray driver {figures['ray']:.2f} s")  # fmt: skip


def _task_pids() -> list[int]:
    """This test's Ray workers running a task now (Ray titles them ``ray::<function>``); only
    descendants of this process, so another Ray on the machine is never touched."""
    parent, title = {}, {}
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue  # gone, or not a process
        if proc.name.isdigit():
            parent[int(proc.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            title[int(proc.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")

    def mine(pid: int) -> bool:
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [pid for pid, t in title.items() if t.startswith("ray::_execute") and mine(pid)]


def both_under_way(root: Path) -> bool:
    """Two jobs running, each with a few calls recorded and most of its video still to do:
    whichever of the two busy workers is killed, it dies mid-video."""
    with Project.open(root) as p:
        rows = p.db.execute(
            "SELECT COUNT(c.seq) FROM jobs j JOIN judge_runs r ON r.job_id = j.id "
            "AND r.status = 'running' LEFT JOIN judge_calls c ON c.run_id = r.id "
            "WHERE j.status = 'running' GROUP BY j.id"
        ).fetchall()
    return len(rows) == 2 and all(1 <= n <= 6 for (n,) in rows)


def test_a_ray_worker_killed_mid_video_costs_one_retry_and_nothing_else(
    cluster: Path, tmp_path: Path, cases_dir: Path
) -> None:
    root = tmp_path / "p"
    with FakeServer(fault_judge(call_s=0.15), expected_key=KEY, models={"fake-vlm"}) as srv:
        ids = make_project(root, cases_dir, srv, max_attempts=3, retry_backoff_s=0.1)
        done = threading.Event()

        def run() -> None:
            drain(root, on_ray=True)
            done.set()

        worker = threading.Thread(target=run)
        worker.start()
        deadline = time.monotonic() + 120
        victim = None
        while victim is None:
            assert time.monotonic() < deadline and not done.is_set(), "no task to kill"
            busy = _task_pids()
            if len(busy) == 2 and both_under_way(root):
                victim = busy[0]
            time.sleep(0.05)
        os.kill(victim, signal.SIGKILL)
        worker.join(timeout=180)
        assert done.is_set(), "the driver did not drain the queue"
        billed = srv.billed_usd(PRICE_IN, PRICE_OUT)
    assert_done_once(root, ids)
    with Project.open(root) as p:
        jobs = [p.jobs.get(j) for j in ids]
        assert sorted(j.attempts for j in jobs) == [1] * (len(ids) - 1) + [2], jobs
        (killed,) = [j for j in jobs if j.attempts == 2]
        runs = [r for r in JudgeRuns(p.db).runs(killed.payload["video_id"])
                if r.job_id == killed.id]  # fmt: skip
        assert sorted(r.status for r in runs) == ["done", "failed"]
        (lost,) = [r for r in runs if r.status == "failed"]
        assert "Ray worker died" in (lost.error or "")
        # the lost attempt's calls are kept and paid for; each recorded call was invoiced once
        assert JudgeRuns(p.db).trace(lost.id).calls and lost.cost_usd > 0
        spend = p.jobs.spend()
        assert spend == pytest.approx(recorded_usd(p), abs=1e-12)
        assert spend == pytest.approx(sum(j.cost_usd for j in jobs), abs=1e-12)
    # a reply the endpoint sent just as the worker died may be billed and never recorded
    assert spend <= billed + 1e-12
