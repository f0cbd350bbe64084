"""``workbench agreement --json`` on a project with two raters and a judge."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from app.cli._main import cli
from storage import Project, import_cases
from tests.app.test_results_workspace import rate


def test_agreement_json(tmp_path: Path, cases_dir: Path) -> None:
    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir)
        for k, v in enumerate(p.videos()):
            rate(p, "alice", v.id, ("T3", None, "P2")[k % 3])
            rate(p, "bob", v.id, ("T3", "P4", "P2")[k % 3])
    res = CliRunner().invoke(
        cli, ["agreement", "--project", str(project), "--json", "--n-boot", "200",
              "--csv", str(tmp_path / "a.csv")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["videos"] == 3 and out["n_boot"] == 200 and out["evaluators"] == []
    icc = next(r for r in out["agreement"] if r["metric"] == "icc_avg" and r["axis"] == "task")
    assert icc["group"] == "human-human" and icc["n"] == 3
    assert (tmp_path / "a.csv").read_text().startswith("group,evaluator,axis,metric")
    again = json.loads(
        CliRunner()
        .invoke(cli, ["agreement", "--project", str(project), "--json", "--n-boot", "200"])
        .output
    )
    assert again["agreement"] == out["agreement"]  # seeded: reproducible
