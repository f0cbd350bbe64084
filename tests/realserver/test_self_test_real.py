"""``workbench self-test --project P --call`` against a real server: what each profile's
endpoint honours, kept with the profile, and a text-only model refused as the video judge in
words a lab user reads (it once only listed /models and said all was well)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app import _self_test
from app.cli._main import cli
from judge import load_profile, save_profile
from storage import Project
from tests.realserver.conftest import real_profile


def test_self_test_call_reports_capabilities_and_refuses_a_text_only_judge(
    tmp_path: Path, real_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_self_test, "CHECKS", (("model client", _self_test._model_client, True),))
    root = tmp_path / "p"
    with Project.create(root) as project:
        save_profile(project.profiles, real_profile(real_url))
    res = CliRunner().invoke(cli, ["self-test", "--json", "--project", str(root), "--call"])
    records = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    (check,) = [r for r in records if r.get("check") == "model client"]
    detail = " ".join(str(check["detail"]).split())
    assert "smollm2-135m listed" in detail
    assert "cap by max_tokens" in detail and "text only" in detail
    assert "NOT usable as the video judge" in detail and "takes no images" in detail
    with Project.open(root) as project:
        caps = load_profile(project.profiles, "smol").capabilities
    assert caps is not None and not caps.images
