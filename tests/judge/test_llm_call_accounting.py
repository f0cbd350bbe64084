"""What every model call of an episode cost and how its reply came out (issue 25): tokens in
and out and US$ for every call of every role, stored with its exchange; replies repaired (valid
only after a re-ask) and silenced (still invalid when the repair budget ran out) counted per
episode and shown beside success and validity in ``workbench metrics`` (text and --json) and in
a batch's results (table and --json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

import judge  # noqa: F401  (registers the llm participants)
from app.cli._main import cli
from judge import ModelProfile, save_profile
from judge.models.loopback import Action, BadArgs, FakeServer
from sim.batch import parse_manifest, queue_batch, results_table
from sim.episode import open_scenario
from sim.interact import run_interactive
from sim.users import PROFILES
from storage import Profiles, Project, run_worker
from tests.judge.llm_participant_helpers import assistant_script, user_script

PRICE_IN, PRICE_OUT = 2.0, 8.0  # US$ per million tokens
CALL_COST = 100 * PRICE_IN / 1e6 + 20 * PRICE_OUT / 1e6  # the loopback's usage: 100 in, 20 out


def _profile(p: Project, name: str, srv: FakeServer) -> None:
    save_profile(Profiles(p.db), ModelProfile(
        name=name, base_url=srv.base_url, model="fake-model", api_key_env="",
        price_in_per_mtok=PRICE_IN, price_out_per_mtok=PRICE_OUT))  # fmt: skip


def metrics(root: Path, target: str, *more: str) -> str:
    res = CliRunner().invoke(cli, ["metrics", target, "--project", str(root), *more])
    assert res.exit_code == 0, res.output
    return res.output


def test_tokens_and_cost_of_every_user_and_assistant_call_are_stored(tmp_path: Path) -> None:
    root = tmp_path / "p"
    with FakeServer(user_script()) as usr, FakeServer(assistant_script()) as asst:
        with Project.create(root) as p:
            _profile(p, "usr", usr)
            _profile(p, "asst", asst)
            ep = run_interactive(
                bound=open_scenario("cook-patty"), persona=PROFILES["balanced"], user="llm",
                user_options={"profile": "usr"}, assistant="llm",
                assistant_options={"profile": "asst"}, project=p,
            )  # fmt: skip
            ep.agent.user.close()  # type: ignore[attr-defined]
            ep.agent.assistant.close()  # type: ignore[attr-defined]
            assert ep.episode_id is not None
            eid = ep.episode_id
            xs = p.episodes.exchanges(eid)
            totals = p.episodes.call_totals(eid)
        calls = len(usr.chat_requests) + len(asst.chat_requests)
    assert {x.party for x in xs} == {"user", "assistant"} and len(xs) == calls
    for x in xs:  # every call of every role: tokens, cost and how its reply came out
        assert (x.tokens_in, x.tokens_out, x.outcome) == (100, 20, "valid")
        assert x.cost_usd is not None and abs(x.cost_usd - CALL_COST) < 1e-12
        (req,) = json.loads(x.sent_json)["requests"]  # the audit has each request's usage
        assert (req["tokens_in"], req["tokens_out"]) == (100, 20)
    assert (totals.replies, totals.valid, totals.tokens_in, totals.tokens_out) == (
        calls, calls, 100 * calls, 20 * calls)  # fmt: skip
    assert abs(totals.cost_usd - calls * CALL_COST) < 1e-9
    got = json.loads(metrics(root, eid[:8], "--json"))["metrics"]
    assert (got["replies"], got["tokens_in"], got["tokens_out"]) == (calls, 100 * calls, 20 * calls)
    assert abs(got["cost_usd"] - calls * CALL_COST) < 1e-9


def _judged(kind: dict[int, str]) -> Any:
    """The assistant script, except that logical call k (re-asks not counted) answers invalid
    arguments first when ``kind[k]`` is ``repaired`` (its re-ask is answered), and to its re-ask
    too when ``silenced``."""
    script, calls = assistant_script(), [0]

    def respond(body: dict[str, Any], n: int) -> Action:
        reask = len(body["messages"]) > 3  # the client appended the bad reply and why
        if not reask:
            calls[0] += 1
        how = kind.get(calls[0], "valid")
        if how == "silenced" or (how == "repaired" and not reask):
            return BadArgs("respond", '{"text": 42, "flag": null}')
        return script(body, n)

    return respond


def test_repaired_and_silenced_replies_are_counted_and_shown(tmp_path: Path) -> None:
    root = tmp_path / "p"
    kind = {2: "repaired", 3: "silenced", 5: "silenced", 7: "repaired"}
    with FakeServer(_judged(kind)) as asst:
        with Project.create(root) as p:
            _profile(p, "asst", asst)
            ep = run_interactive(bound=open_scenario("cook-patty"),
                                 persona=PROFILES["balanced"], assistant="llm",
                                 assistant_options={"profile": "asst", "repairs": 1},
                                 project=p)  # fmt: skip
            ep.agent.assistant.close()  # type: ignore[attr-defined]
            assert ep.episode_id is not None
            eid = ep.episode_id
            outcomes = [x.outcome for x in p.episodes.exchanges(eid, "assistant")]
        sent = len(asst.chat_requests)
    assert outcomes[1:7] == ["repaired", "silenced", "valid", "silenced", "valid", "repaired"]
    n = len(outcomes)
    assert sent == n + 4  # one re-ask each for two repaired and two silenced replies
    text = metrics(root, eid[:8])
    assert f"replies                {n}" in text
    assert "replies_repaired       2" in text and "replies_silenced       2" in text
    assert "success " in text and "validity " in text  # beside them, as the brief asks
    got = json.loads(metrics(root, eid[:8], "--json"))["metrics"]
    assert (got["replies"], got["replies_repaired"], got["replies_silenced"]) == (n, 2, 2)
    assert got["tokens_in"] == 100 * sent


def test_a_batch_shows_silenced_replies_and_cost_beside_its_success(tmp_path: Path) -> None:
    """Repairs off, and the model never gets the schema right: every reply is silenced, which
    the table says next to a success rate that would otherwise look perfect."""
    root = tmp_path / "p"
    never = BadArgs("respond", '{"text": "hello"')  # not even JSON
    with FakeServer(lambda _b, _n: never) as asst:
        with Project.create(root) as p:
            _profile(p, "asst", asst)
            batch_id, _ = queue_batch(p, parse_manifest({
                "format": "workbench-batch/1", "name": "honest", "scenarios": ["cook-patty"],
                "personas": ["balanced"], "runs": 2,
                "assistants": [{"name": "asst", "kind": "llm",
                                "options": {"profile": "asst", "repairs": 0}}],
            }))  # fmt: skip
        stats = run_worker(root, drain=True, kind_modules=["judge", "sim.batch"],
                           log=lambda _r: None)  # fmt: skip
        sent = len(asst.chat_requests)
    assert stats.done == 2
    with Project.open(root) as p:
        (row,) = results_table(p, batch_id).rows
    c = row.calls
    assert (c.replies, c.silenced, c.repaired, c.valid) == (sent, sent, 0, 0)
    assert (c.tokens_in, c.tokens_out) == (100 * sent, 20 * sent)
    assert abs(c.cost_usd - sent * CALL_COST) < 1e-9
    res = CliRunner().invoke(cli, ["batch", "status", batch_id[:8], "--project", str(root)])
    assert res.exit_code == 0, res.output
    header, line = res.output.splitlines()[1:3]
    assert "silenced" in header and "repaired" in header and "US$" in header
    assert f"{sent}/{sent}" in line and f"0/{sent}" in line and f"{sent * CALL_COST:.4f}" in line
    res = CliRunner().invoke(cli, ["batch", "status", batch_id[:8], "--project", str(root),
                                   "--json"])  # fmt: skip
    (js,) = json.loads(res.output)["rows"]
    assert js["calls"]["silenced"] == js["calls"]["replies"] == sent
