"""``workbench worker --ray``: a real process starting its own local cluster runs the queue, and
``jobs status`` says where each job ran; without Ray the command says how to install it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli._main import cli
from storage import Project

pytestmark = pytest.mark.slow


def test_worker_on_a_local_cluster_and_where_the_jobs_ran(tmp_path: Path) -> None:
    root = tmp_path / "p"
    with Project.create(root) as p:
        p.jobs.enqueue("diag.task", [{"n": k} for k in range(4)])
        p.jobs.enqueue("diag.echo", [{"n": 9}])  # not a remote kind: the driver runs it itself
    cmd = [sys.executable, "-m", "app.cli", "worker", "--project", str(root), "--drain",
           "--ray", "local", "--ray-cpus", "2", "--concurrency", "2"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    start = next(json.loads(ln) for ln in out.stderr.splitlines() if '"worker.start"' in ln)
    assert start["ray"] == "local"
    res = CliRunner().invoke(cli, ["jobs", "status", "--project", str(root), "--json"])
    status = json.loads(res.output)
    assert status["counts"]["done"] == 5 and status["failed"] == []
    nodes = {host: n for host, n in status["ran_on"].items() if "/" in host}
    assert sum(nodes.values()) == 4 and len(nodes) == 1  # the four tasks, on the one node
    assert sum(status["ran_on"].values()) == 5  # and the echo where the driver runs
    text = CliRunner().invoke(cli, ["jobs", "status", "--project", str(root)]).output
    assert f"{next(iter(nodes))}: 4" in text


def test_without_ray_the_worker_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Project.create(tmp_path / "p").close()
    monkeypatch.setitem(sys.modules, "ray", None)
    res = CliRunner().invoke(cli, ["worker", "--project", str(tmp_path / "p"), "--ray", "local",
                                   "--drain"])  # fmt: skip
    assert res.exit_code == 2
    assert "pip install 'rollout-workbench[cluster]'" in res.output


def test_the_45_episode_batch_runs_on_a_local_cluster(tmp_path: Path) -> None:
    """Issue 8's pilot batch (3 scenarios × 3 personas × 5 runs) queued by the CLI and run by
    ``worker --ray local``: every planned episode stored exactly once, each by a Ray node."""
    from tests.cli.test_batch_cli import MANIFEST

    root = tmp_path / "p"
    (tmp_path / "m.json").write_text(json.dumps(MANIFEST))
    res = CliRunner().invoke(cli, ["batch", "run", str(tmp_path / "m.json"), "--project",
                                   str(root), "--queue-only", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    batch_id = str(json.loads(res.output)["batch"])
    cmd = [sys.executable, "-m", "app.cli", "worker", "--project", str(root), "--drain",
           "--ray", "local", "--ray-cpus", "2", "--concurrency", "2"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    with Project.open(root) as p:
        cells = p.batches.cells(batch_id)
        ids = [c.episode_id for c in cells]
        assert len(cells) == 45 and None not in ids and len(set(ids)) == 45
        assert len(p.episodes.list(reference=False)) == 45
        jobs = [p.jobs.get(int(str(c.job_id))) for c in cells]
    assert {j.status.value for j in jobs} == {"done"}
    assert all(j.ran_on and "/" in j.ran_on for j in jobs)  # each ran as a Ray task
