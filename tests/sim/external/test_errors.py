"""Every way an external agent can break the protocol gives one clear ExternalAgentError."""

from __future__ import annotations

from typing import Any

import pytest

from annotation import UserError
from sim.episode import EpisodeRunner, make_world
from sim.external import ExternalAgent, ExternalAgentError
from sim.world import World
from tests.sim.external.helpers import READY, Recorded, run, script, stack_two

# answers the hello properly, then gives `reply` (a Python expression) to the first observation
AFTER_READY = """
sys.stdin.readline()
print(%r, flush=True)
sys.stdin.readline()
%s
sys.stdin.readline()
"""


def _fail(argv: list[str], timeout: float = 10.0, log: Recorded | None = None) -> str:
    def make(b: Any, world: World) -> ExternalAgent:
        rec = None if log is None else (lambda d, t, m: log.append((d, t, m)))
        return ExternalAgent.spawn(argv, b, world, timeout=timeout, record=rec)

    with pytest.raises(ExternalAgentError) as err:
        run(stack_two(), make)
    assert isinstance(err.value, UserError)
    return str(err.value)


def test_malformed_json_names_the_message() -> None:
    log: Recorded = []
    msg = _fail(script(AFTER_READY % (READY, "print('{\"type\": act}', flush=True)")), log=log)
    assert "message 2 from the agent" in msg and "not JSON" in msg, msg
    assert log[-2] == ("received", 0, {"invalid": '{"type": act}'})  # kept for the audit
    assert log[-1][2]["type"] == "end" and log[-1][2]["status"] == "error"


def test_wrong_protocol_version() -> None:
    ready = READY.replace("workbench-agent/1", "workbench-agent/7")
    msg = _fail(script(AFTER_READY % (ready, "")))
    assert "message 1 from the agent" in msg and "field 'protocol'" in msg, msg
    assert "workbench-agent/7" in msg and "workbench-agent/1" in msg


def test_unknown_message_type() -> None:
    msg = _fail(script(AFTER_READY % (READY, "send({'type': 'jump'})")))
    assert "message 2" in msg and "field 'type'" in msg and "'jump'" in msg, msg
    assert "act, wait or done" in msg


def test_unknown_verb_in_a_structured_action() -> None:
    act = "send({'type': 'act', 'actions': [{'verb': 'pick'}, {'verb': 'fly', 'obj': 'x'}]})"
    msg = _fail(script(AFTER_READY % (READY, act)))
    assert "message 2" in msg and "field 'actions[1]'" in msg and "'fly'" in msg, msg


def test_command_that_is_not_a_command() -> None:
    act = "send({'type': 'act', 'actions': ['dance with the red brick']})"
    msg = _fail(script(AFTER_READY % (READY, act)))
    assert "field 'actions[0]'" in msg and "not a command I know" in msg, msg


def test_unknown_field() -> None:
    act = "send({'type': 'act', 'action': ['pick up the red brick']})"
    msg = _fail(script(AFTER_READY % (READY, act)))
    assert "message 2" in msg and "unknown field(s) action" in msg, msg


def test_client_exits_mid_episode_with_its_stderr_tail() -> None:
    died = "sys.stderr.write('Traceback\\nRuntimeError: policy died\\n'); sys.exit(3)"
    msg = _fail(script(AFTER_READY % (READY, died)))
    assert "exited with code 3" in msg, msg
    assert "RuntimeError: policy died" in msg  # the stderr tail says why


def test_client_that_never_answers_times_out() -> None:
    msg = _fail(script(AFTER_READY % (READY, "import time; time.sleep(60)")), timeout=0.3)
    assert "no reply within 0.3 s" in msg and "observation at tick 0" in msg, msg


def test_command_that_cannot_start() -> None:
    bound = stack_two()
    with pytest.raises(ExternalAgentError, match="cannot start the agent command"):
        ExternalAgent.spawn(["/nonexistent/agent-binary"], bound, make_world(bound, "symbolic"))


def test_restore_refuses_and_points_to_replay() -> None:
    bound = stack_two()
    world = make_world(bound, "symbolic")
    agent = ExternalAgent.spawn(script(AFTER_READY % (READY, "")), bound, world)
    runner = EpisodeRunner(world, bound, agent)
    try:
        runner.start()
        snap = runner.snapshot()
        assert snap["agent"] == {"exchanges": 0, "done": False}
        with pytest.raises(ExternalAgentError, match="replay the recorded decisions"):
            runner.restore(snap)
    finally:
        agent.close()
