"""`sim run --agent llm|external`: the tool-calling agent over real HTTP to the loopback server,
and your own process over workbench-agent/1; both episodes store what was sent and received."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from click.testing import CliRunner

from app.cli._main import cli
from judge.models.loopback import FakeServer, Reply
from storage import Project

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "external_agent.py"


def run(*args: str) -> dict[str, object]:
    res = CliRunner().invoke(cli, ["sim", "run", *args, "--mode", "symbolic", "--json"])
    assert res.exit_code == 0, res.output
    return dict(json.loads(res.output))


def test_llm_agent_runs_an_episode_over_http(tmp_path: Path) -> None:
    root = tmp_path / "p"
    Project.create(root).close()
    script = [
        Reply("act", {"command": "pick up the red brick"}),
        Reply("act", {"command": "put the red brick on the blue brick"}),
        Reply("submit", {"claim": "done"}),
    ]
    with FakeServer(script) as srv:
        res = CliRunner().invoke(
            cli, ["judge", "profile", "add", "--project", str(root), "loop",
                  "--base-url", srv.base_url, "--model", "fake-model", "--api-key-env", ""],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        out = run("stack-two", "--project", str(root), "--agent", "llm", "--profile", "loop")
        bodies = [r.body for r in srv.chat_requests]
    assert out["status"] == "completed" and out["success"] is True
    with Project.open(root) as p:
        ep = p.episodes.get(str(out["episode"]))
        assert ep.agent == "llm"
        stored = p.episodes.exchanges(ep.id)
        assert [x.party for x in stored] == ["agent"] * 3 == ["agent"] * len(bodies)
        # what is stored is what went over the wire
        assert [json.loads(x.sent_json)["messages"] for x in stored] == [
            b["messages"] for b in bodies
        ]
        assert "put the red brick" in str(stored[1].received_json)


def test_external_agent_runs_an_episode(tmp_path: Path) -> None:
    root = tmp_path / "p"
    cmd = [sys.executable, str(EXAMPLE), "pick up the red brick",
           "put the red brick on the blue brick"]  # fmt: skip
    out = run("stack-two", "--project", str(root), "--agent", "external",
              "--agent-cmd", shlex.join(cmd))  # fmt: skip
    assert out["status"] == "completed" and out["success"] is True
    with Project.open(root) as p:
        stored = p.episodes.exchanges(str(out["episode"]))
        kinds = [json.loads(x.sent_json)["type"] for x in stored]
        assert kinds[0] == "hello" and "observation" in kinds and kinds[-1] == "end"
        assert json.loads(str(stored[0].received_json))["type"] == "ready"


def test_agent_options_are_checked() -> None:
    res = CliRunner().invoke(cli, ["sim", "run", "stack-two", "--project", "/nonexistent/x",
                                   "--agent", "llm"])  # fmt: skip
    assert res.exit_code == 2 and "--agent llm needs --profile" in res.output
    res = CliRunner().invoke(cli, ["sim", "run", "stack-two", "--project", "/nonexistent/x",
                                   "--agent", "external"])  # fmt: skip
    assert res.exit_code == 2 and "--agent-cmd" in res.output
