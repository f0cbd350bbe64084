"""Blind mode from the command line: the lead turns it on; results commands then need the
passphrase (``--passphrase`` or ``WB_LEAD_PASSPHRASE``) and refuse in one line without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli._main import cli
from storage import Project, import_cases
from tests.app.rated import rate

PASS = "correct horse"


@pytest.fixture
def rated(tmp_path: Path, cases_dir: Path) -> Path:
    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir)
        for k, v in enumerate(p.videos()):
            rate(p, "alice", v.id, ("T3", None, "P2")[k % 3])
            rate(p, "bob", v.id, ("T2", "P4", None)[k % 3])
    return project


def test_results_commands_refuse_in_blind_mode_without_the_passphrase(
    rated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WB_LEAD_PASSPHRASE", raising=False)
    run = CliRunner().invoke
    base = ["--project", str(rated)]
    assert run(cli, ["blind", "status", *base]).output.strip() == "blind mode off"
    # typed twice at the prompt, as a lead would
    res = run(cli, ["blind", "on", *base], input=f"{PASS}\n{PASS}\n")
    assert res.exit_code == 0, res.output
    assert run(cli, ["blind", "status", *base]).output.strip() == "blind mode on"

    for args in (
        ["agreement", *base, "--n-boot", "20"],
        ["agreement", *base, "--disagreements"],
        ["ablation", *base],
    ):
        res = run(cli, args)
        assert res.exit_code == 2, res.output
        assert "blind mode" in res.output and "--passphrase or WB_LEAD_PASSPHRASE" in res.output
        assert "model_0" not in res.output and "Traceback" not in res.output
        wrong = run(cli, [*args, "--passphrase", "wrong horse"])
        assert wrong.exit_code == 2 and "passphrase given is wrong" in wrong.output

    ok = run(cli, ["agreement", *base, "--n-boot", "20", "--json", "--passphrase", PASS])
    assert ok.exit_code == 0, ok.output
    assert {r["model"] for r in json.loads(ok.output)["leaderboard"]} >= {"model_0", "model_1"}
    monkeypatch.setenv("WB_LEAD_PASSPHRASE", PASS)
    assert run(cli, ["agreement", *base, "--disagreements"]).exit_code == 0
    monkeypatch.delenv("WB_LEAD_PASSPHRASE")

    res = run(cli, ["blind", "off", *base, "--passphrase", "wrong horse"])
    assert res.exit_code == 2 and "wrong passphrase" in res.output
    assert run(cli, ["blind", "off", *base, "--passphrase", PASS]).exit_code == 0
    assert run(cli, ["agreement", *base, "--n-boot", "20"]).exit_code == 0


def test_blind_on_refuses_a_short_passphrase(rated: Path) -> None:
    res = CliRunner().invoke(cli, ["blind", "on", "--project", str(rated), "--passphrase", "short"])
    assert res.exit_code == 2 and "at least 8 characters" in res.output
    with Project.open(rated) as p:
        assert not p.blinding.enabled
