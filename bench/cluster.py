"""bench/cluster: the queue on a local Ray cluster (2 CPUs) against one local worker, same run.

- **episodes**: the 45-episode symbolic batch (3 scenarios × 3 personas × 5 runs, oracle
  assistant) by one local worker (one runner: one core) and by the Ray driver with 2 CPUs and
  2 tasks in flight: the speed-up (goal ≥ 1.8×);
- **judge**: a batch of judge jobs against the loopback server answering each call after 1 s, at
  the same concurrency locally and on Ray: throughput against the ideal (calls × latency ÷
  concurrency; goal ≥ 0.8 of ideal on Ray);
- **driver overhead**: zero-work ``diag.task`` jobs one at a time through the driver, against the
  same jobs run by a local worker in the same process: the extra milliseconds per task that the
  cluster round trip (submit, the mailbox, the result) and the driver's bookkeeping cost (goal
  ≤ 5 ms);
- **SQLite ceiling**: the commits one job costs the driver (claim, where it ran, complete), timed
  on this disk with no Ray at all, as jobs per second one driver can record, and what that means
  in concurrent tasks for an episode or a judge video of the measured length; also zero-work
  tasks at 16 in flight through Ray.

    python bench/cluster.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PILOT = {
    "format": "workbench-batch/1", "name": "pilot45",
    "scenarios": ["cook-patty", "cheeseburger", "prep-board"],
    "personas": ["novice", "expert", "balanced"], "assistants": ["oracle"], "runs": 5,
}  # fmt: skip


def _quiet(_record: dict[str, Any]) -> None:
    pass


def episodes(root: Path, runs: int, ray_cpus: int) -> dict[str, Any]:
    from sim.batch import parse_manifest, queue_batch
    from storage import Project, run_worker
    from storage.jobs._ray_driver import connect

    manifest = parse_manifest(PILOT | {"runs": runs}, source="bench")
    out: dict[str, Any] = {"episodes": 9 * runs}
    hashes: dict[str, list[str]] = {}
    # warm, as a long batch is: the cluster up and its worker processes' imports done
    connect("local", cpus=ray_cpus)
    warm = parse_manifest(PILOT | {"runs": 1, "scenarios": PILOT["scenarios"][:1]}, source="warm")
    with Project.create(root / "warm-up") as p:
        queue_batch(p, warm)
    run_worker(root / "warm-up", concurrency=ray_cpus, drain=True, log=_quiet, ray="local",
               kind_modules=("judge", "sim.batch"))  # fmt: skip
    for label, options in (("local_1_worker", {}),
                           ("ray_2cpu", {"ray": "local", "ray_cpus": ray_cpus})):  # fmt: skip
        folder = root / label
        with Project.create(folder) as p:
            batch_id, _jobs = queue_batch(p, manifest)
        concurrency = 1 if not options else ray_cpus
        start = time.perf_counter()
        stats = run_worker(folder, concurrency=concurrency, drain=True, log=_quiet,
                           kind_modules=("judge", "sim.batch"), **options)  # fmt: skip
        seconds = time.perf_counter() - start
        with Project.open(folder) as p:
            cells = p.batches.cells(batch_id)
            hashes[label] = [p.episodes.hashes(str(c.episode_id))[-1] for c in cells]
        out[label] = {"seconds": round(seconds, 2), "done": stats.done}
    out["speedup"] = round(out["local_1_worker"]["seconds"] / out["ray_2cpu"]["seconds"], 2)
    out["same_final_hashes"] = hashes["local_1_worker"] == hashes["ray_2cpu"]
    return out


def judge_batch(root: Path, videos: int, latency_s: float, concurrency: int,
                ray_cpus: int) -> dict[str, Any]:  # fmt: skip
    """Judge ``videos`` demo clips through the loopback server at ``concurrency``."""
    from judge import ModelProfile, queue_judge, save_profile
    from judge.models.loopback import Delay, FakeServer
    from judge.video.loopback import wire_responder
    from sim.synthetic import write_demo_cases
    from storage import Profiles, Project, import_cases, run_worker

    cases = root / "cases"
    write_demo_cases(cases, size=(320, 180))  # 17 clips; the first ``videos`` are judged
    respond = wire_responder()  # the all-yes judge, two subgoals
    out: dict[str, Any] = {"videos": videos, "latency_s": latency_s, "concurrency": concurrency}

    def slow(body: dict[str, Any], n: int) -> Any:
        return Delay(latency_s, respond(body, n))

    for label, options in (("local", {}), ("ray_2cpu", {"ray": "local", "ray_cpus": ray_cpus})):
        folder = root / label
        with FakeServer(slow) as srv, Project.create(folder) as p:
            import_cases(p, cases)
            save_profile(Profiles(p.db), ModelProfile(name="lb", base_url=srv.base_url,
                                                      model="m", api_key_env=""))  # fmt: skip
            queue_judge(p, [v.id for v in p.videos()][:videos], profile="lb")
            p.db.execute("DELETE FROM jobs WHERE kind != 'judge.video'")  # scans done inline
            p.db.commit()
            start = time.perf_counter()
            run_worker(folder, concurrency=concurrency, drain=True, log=_quiet,
                       kind_modules=("judge",), **options)  # fmt: skip
            seconds = time.perf_counter() - start
            calls = len([r for r in srv.requests if r.path.endswith("/chat/completions")])
        ideal = calls * latency_s / concurrency
        out[label] = {"seconds": round(seconds, 2), "calls": calls,
                      "throughput_of_ideal": round(ideal / seconds, 3)}  # fmt: skip
    return out


def driver_overhead(root: Path, n: int, ray_cpus: int) -> dict[str, Any]:
    """Per task, warm (the cluster started and its worker processes up, as in a long batch)."""
    from storage import Project, run_worker
    from storage.jobs._ray_driver import connect

    connect("local", cpus=ray_cpus)
    out: dict[str, Any] = {"tasks": n}
    for label, options in (("local", {}), ("ray", {"ray": "local"})):
        for phase in ("warm-up", "timed"):
            folder = root / f"overhead-{label}-{phase}"
            with Project.create(folder) as p:
                p.jobs.enqueue(
                    "diag.task", [{"n": k} for k in range(n if phase == "timed" else 10)]
                )
            start = time.perf_counter()
            run_worker(folder, concurrency=1, drain=True, poll_s=0.01, log=_quiet, **options)
            if phase == "timed":
                out[f"{label}_ms_per_task"] = round((time.perf_counter() - start) / n * 1000, 2)
    out["overhead_ms_per_task"] = round(out["ray_ms_per_task"] - out["local_ms_per_task"], 2)
    return out


def sqlite_ceiling(
    root: Path, n: int, ray_cpus: int, durations: dict[str, float]
) -> dict[str, Any]:
    """What recording a job costs on this disk, and what that allows."""
    from storage import Project, run_worker

    folder = root / "ceiling"
    with Project.create(folder) as p:
        p.jobs.enqueue("diag.echo", [{"n": k} for k in range(n)])
        start = time.perf_counter()
        for _ in range(n):  # the driver's commits for one job, with no work and no Ray
            job = p.jobs.claim("bench:0:0", 30.0)
            assert job is not None and job.lease_owner is not None
            p.jobs.set_ran_on(job.id, job.lease_owner, "node")
            p.jobs.complete(job.id, job.lease_owner, lambda: "done")
        per_job_s = (time.perf_counter() - start) / n
    jobs_per_s = 1 / per_job_s
    out: dict[str, Any] = {
        "commits_per_job": 3, "ms_per_job": round(per_job_s * 1000, 3),
        "jobs_per_s": round(jobs_per_s, 1),
        "concurrent_tasks_fed": {k: int(jobs_per_s * v) for k, v in durations.items()},
    }  # fmt: skip
    for phase in ("warm-up", "timed"):  # the first run starts the 16 worker processes
        folder = root / f"ceiling-ray-{phase}"
        with Project.create(folder) as p:
            p.jobs.enqueue("diag.task", [{"n": k, "cpus": 0.05} for k in range(n)])
        start = time.perf_counter()
        run_worker(folder, concurrency=16, drain=True, poll_s=0.01, log=_quiet, ray="local",
                   ray_cpus=ray_cpus)  # fmt: skip
    out["ray_zero_work_16_in_flight_jobs_per_s"] = round(n / (time.perf_counter() - start), 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller batches")
    args = ap.parse_args()
    os.environ.setdefault("MUJOCO_GL", "egl")
    # Ray prints its raylet's warnings on stdout; this bench's stdout is one JSON object
    stdout = os.dup(1)
    os.dup2(2, 1)
    out: dict[str, Any] = {"bench": "cluster", "ray_cpus": 2}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        out["episodes"] = episodes(root / "ep", runs=1 if args.quick else 5, ray_cpus=2)
        ep_s = out["episodes"]["local_1_worker"]["seconds"] / out["episodes"]["episodes"]
        out["judge"] = judge_batch(root / "judge", videos=4 if args.quick else 8,
                                   latency_s=1.0, concurrency=2, ray_cpus=2)  # fmt: skip
        judge_s = out["judge"]["local"]["seconds"] * 2 / out["judge"]["videos"]
        out["driver_overhead"] = driver_overhead(root, n=30 if args.quick else 100, ray_cpus=2)
        out["sqlite_ceiling"] = sqlite_ceiling(
            root,
            n=100 if args.quick else 400,
            ray_cpus=2,
            durations={"symbolic_episode": round(ep_s, 3), "judge_video": round(judge_s, 3)},
        )
    import ray

    ray.shutdown()
    sys.stdout.flush()
    os.dup2(stdout, 1)
    out["goals"] = {"episode_speedup": 1.8, "judge_throughput_of_ideal": 0.8,
                    "driver_overhead_ms": 5.0}  # fmt: skip
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
