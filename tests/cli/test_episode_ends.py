"""How a run from the command line ends when it does not run its course (issue 25): a model
that fails mid-run, Ctrl+C or SIGTERM, a tool agent that never manages a tool call, an
external agent that dies. Each is stored with a status that says so, its ticks and every
exchange made so far, printed, and then exports as a bundle and replays."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from app.cli._main import cli
from app.cli._run_guard import interruptible
from judge.models.loopback import FakeServer, ReplyText, Status
from sim.interact import (
    ASSISTANTS,
    AssistantReply,
    AssistantView,
    OracleAssistant,
    replay_interactive,
)
from storage import EpisodeRecord, Project
from tests.judge.llm_participant_helpers import assistant_script


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def add_profile(root: Path, srv: FakeServer) -> None:
    res = invoke("judge", "profile", "add", "--project", str(root), "loop", "--base-url",
                 srv.base_url, "--model", "fake-model", "--api-key-env", "")  # fmt: skip
    assert res.exit_code == 0, res.output


def only_episode(root: Path) -> EpisodeRecord:
    with Project.open(root) as p:
        (ep,) = p.episodes.list()
        return ep


def exports_and_replays(root: Path, ep: EpisodeRecord, tmp_path: Path) -> dict[str, Any]:
    """``episode export --bundle`` writes it with its status; ``sim replay`` reproduces every
    tick it recorded."""
    out = tmp_path / "bundle"
    res = invoke("episode", "export", ep.id[:8], "--bundle", str(out), "--project", str(root))
    assert res.exit_code == 0, res.output
    meta: dict[str, Any] = json.loads((out / "episode.json").read_text("utf-8"))
    assert (meta["status"], meta["end_reason"], meta["ticks"]) == (
        ep.status.value, ep.end_reason, ep.ticks)  # fmt: skip
    res = invoke("sim", "replay", ep.id[:8], "--project", str(root))
    assert res.exit_code == 0 and "identical" in res.output, res.output
    if ep.config.get("interactive"):  # and from its recorded turns and replies
        with Project.open(root) as p:
            assert replay_interactive(p, ep.id).identical
    return meta


def test_an_assistant_whose_model_fails_mid_run_is_stored_failed(tmp_path: Path) -> None:
    root = tmp_path / "p"
    Project.create(root).close()
    script = assistant_script()

    def respond(body: dict[str, Any], n: int) -> Any:
        return Status(400, "context window exceeded", no_retry=True) if n == 4 else script(body, n)

    with FakeServer(respond) as srv:
        add_profile(root, srv)
        res = invoke("episode", "run", "cook-patty", "--project", str(root), "--assistant",
                     "llm", "--profile", "loop")  # fmt: skip
        sent = len(srv.chat_requests)
    ep = only_episode(root)
    assert res.exit_code == 2
    assert "the endpoint rejected the request (HTTP 400): context window exceeded" in res.output
    assert f"episode {ep.id[:8]} was stored as failed after {ep.ticks} ticks" in res.output
    assert ep.status.value == "failed" and ep.ticks > 0
    assert ep.end_reason is not None and "HTTP 400" in ep.end_reason
    with Project.open(root) as p:
        asked = p.episodes.exchanges(ep.id, "assistant")
        turns = p.episodes.turns(ep.id)
    assert len(asked) == sent == 5  # every call made, the failed one included
    assert [x.outcome for x in asked] == ["valid"] * 4 + ["failed"]
    failed = json.loads(str(asked[-1].received_json))
    assert "HTTP 400" in failed["error"] and json.loads(asked[-1].sent_json)["requests"]
    assert turns and turns[0].text.startswith("Hi, I'm watching")
    exports_and_replays(root, ep, tmp_path)
    res = invoke("metrics", ep.id[:8], "--project", str(root))
    assert res.exit_code == 0 and "failed, " in res.output and "HTTP 400" in res.output


class Interrupting(OracleAssistant):
    """The oracle, until Ctrl+C arrives during its fifth query."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def respond(self, view: AssistantView) -> tuple[AssistantReply, float]:
        self.asked += 1
        if self.asked == 5:
            raise KeyboardInterrupt
        return super().respond(view)


def test_ctrl_c_is_stored_cancelled_as_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(ASSISTANTS, "interrupting", lambda _s: Interrupting())
    root = tmp_path / "p"
    res = invoke("episode", "run", "cook-patty", "--project", str(root), "--assistant",
                 "interrupting")  # fmt: skip
    ep = only_episode(root)
    assert res.exit_code == 130, res.output
    assert (ep.status.value, ep.end_reason) == ("cancelled", "interrupted (Ctrl+C)")
    assert ep.ticks > 0
    assert f"interrupted (Ctrl+C); episode {ep.id[:8]} was stored as cancelled" in res.output
    with Project.open(root) as p:
        asked = p.episodes.exchanges(ep.id, "assistant")
    assert len(asked) == 5 and json.loads(str(asked[-1].received_json)) == {
        "error": "KeyboardInterrupt"}  # fmt: skip
    exports_and_replays(root, ep, tmp_path)


def test_sigterm_is_handled_as_ctrl_c() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(click.exceptions.Exit) as stopped, interruptible():
        os.kill(os.getpid(), signal.SIGTERM)
    assert stopped.value.exit_code == 130
    assert signal.getsignal(signal.SIGTERM) is before  # put back afterwards


def test_a_tool_agent_that_never_calls_a_tool_ends_aborted(tmp_path: Path) -> None:
    root = tmp_path / "p"
    Project.create(root).close()
    prose = ReplyText("I would pick up the red brick first.")
    with FakeServer(lambda _b, _n: prose) as srv:
        add_profile(root, srv)
        res = invoke("sim", "run", "stack-two", "--project", str(root), "--agent", "llm",
                     "--profile", "loop", "--mode", "symbolic", "--json")  # fmt: skip
        sent = len(srv.chat_requests)
        text = invoke("sim", "run", "stack-two", "--project", str(root), "--agent", "llm",
                      "--profile", "loop", "--mode", "symbolic")  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert (out["status"], out["success"]) == ("aborted", False)
    assert out["end_reason"].startswith("the agent gave up: 3 failed steps in a row (last: ")
    assert "aborted: the agent gave up: 3 failed steps in a row" in text.output
    with Project.open(root) as p:
        ep = p.episodes.get(out["episode"])
        calls = p.episodes.call_totals(ep.id)
        exchanges = p.episodes.exchanges(ep.id)
    assert (ep.status.value, ep.end_reason) == ("aborted", out["end_reason"])
    assert len(exchanges) == sent  # every request; each of the 3 calls ends silenced
    assert (calls.replies, calls.silenced, calls.tokens_in) == (3, 3, 100 * sent)
    exports_and_replays(root, ep, tmp_path)


DYING = """
import json, sys
for n, line in enumerate(sys.stdin):
    if json.loads(line)["type"] == "hello":
        print(json.dumps({"type": "ready", "protocol": "workbench-agent/1",
                          "agent": {"name": "dying", "version": "1"}}), flush=True)
    elif n == 1:
        print(json.dumps({"type": "act", "actions": ["pick up the red brick"]}), flush=True)
    else:
        sys.exit(3)
"""


def test_an_external_agent_that_dies_is_stored_failed(tmp_path: Path) -> None:
    root = tmp_path / "p"
    script = tmp_path / "dying.py"
    script.write_text(DYING, "utf-8")
    res = invoke("sim", "run", "stack-two", "--project", str(root), "--mode", "symbolic",
                 "--agent", "external", "--agent-cmd",
                 shlex.join([sys.executable, str(script)]))  # fmt: skip
    ep = only_episode(root)
    assert res.exit_code == 2, res.output
    assert f"episode {ep.id[:8]} was stored as failed after {ep.ticks} ticks" in res.output
    assert ep.status.value == "failed" and ep.ticks > 0 and ep.end_reason
    assert "instead of answering" in ep.end_reason
    with Project.open(root) as p:
        kinds = [json.loads(x.sent_json).get("type") for x in p.episodes.exchanges(ep.id)]
        assert kinds[:2] == ["hello", "observation"] and p.episodes.actions(ep.id)
    exports_and_replays(root, ep, tmp_path)
