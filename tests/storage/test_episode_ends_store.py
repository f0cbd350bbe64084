"""Schema v13: episodes that end ``failed`` with an end reason, and each model exchange's
tokens, cost and reply outcome, summed per episode; a v12 project migrates in place."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from storage import CallTotals, EpisodeError, EpisodeStatus, ExchangeRecord, Project, TickRecord
from storage._db import connect, migrate
from storage._schema import MIGRATIONS

CONTRACT = json.dumps({"type": "terminal_state", "predicates": []})


def _create(p: Project) -> str:
    return p.episodes.create(
        scenario="stack-two", scenario_sha="s" * 64, family="stack", mode="symbolic",
        agent="llm", seed=1, delta=0.5, contract_json=CONTRACT, contract_hash="c" * 64,
        config={},
    )  # fmt: skip


def _x(idx: int, **over: Any) -> ExchangeRecord:
    base: dict[str, Any] = dict(idx=idx, tick=idx, party="assistant", sent_json="{}",
                                received_json="{}")  # fmt: skip
    return ExchangeRecord(**(base | over))


def test_a_v12_project_migrates_and_takes_failed_episodes(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:12], root / "project.sqlite")  # written by schema v12
    db.close()
    with Project.open(root) as p:  # migrated on open, in place
        assert p.db.table("meta").get("schema_version")["value"] == "13" == str(len(MIGRATIONS))
        assert p.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        eid = _create(p)
        p.episodes.append(eid, ticks=[TickRecord(0, "h0", graph_json="{}")],
                          exchanges=[_x(0, tokens_in=10, tokens_out=2, cost_usd=0.01,
                                        outcome="failed")])  # fmt: skip
        p.episodes.finish(eid, status="failed", ticks=0, t_ref=None,
                          end_reason="assistant llm: HTTP 400")  # fmt: skip
        ep = p.episodes.get(eid)
        assert (ep.status, ep.end_reason) == (EpisodeStatus.FAILED, "assistant llm: HTTP 400")
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):  # the CHECK still holds
            p.db.execute("UPDATE sim_episodes SET status = 'exploded' WHERE id = ?", [eid])
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            p.db.execute("UPDATE sim_exchanges SET outcome = 'meh' WHERE episode_id = ?", [eid])


def test_call_totals_sum_the_model_exchanges(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        eid, other = _create(p), _create(p)
        p.episodes.append(eid, exchanges=[
            _x(0, tokens_in=100, tokens_out=20, cost_usd=0.5, outcome="valid"),
            _x(1, tokens_in=100, tokens_out=20, cost_usd=0.5),  # a re-asked request
            _x(2, tokens_in=100, tokens_out=20, cost_usd=0.5, outcome="repaired"),
            _x(3, tokens_in=200, tokens_out=40, cost_usd=1.0, outcome="silenced"),
            _x(4, outcome="failed"),
            _x(5, party="user"),  # no model behind it: counts nothing
        ])  # fmt: skip
        p.episodes.append(other, exchanges=[_x(0, party="agent")])
        got = p.episodes.call_totals(eid)
        assert got == CallTotals(replies=4, valid=1, repaired=1, silenced=1, failed=1,
                                 tokens_in=500, tokens_out=100, cost_usd=2.5)  # fmt: skip
        assert p.episodes.call_totals(other) == CallTotals()
        assert p.episodes.call_totals_by_episode() == {eid: got}
        assert got + got == CallTotals(8, 2, 2, 2, 2, 1000, 200, 5.0)


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"outcome": "great"}, "exchanges[0].outcome: 'great' is not one of valid, repaired"),
        ({"tokens_in": -1}, "exchanges[0].tokens_in: expected an int >= 0"),
        ({"tokens_out": 1.5}, "exchanges[0].tokens_out: expected an int >= 0"),
        ({"cost_usd": math.nan}, "exchanges[0].cost_usd: expected US$ >= 0 or None"),
    ],
)
def test_a_bad_exchange_field_is_named_and_nothing_is_stored(
    tmp_path: Path, over: dict[str, Any], message: str
) -> None:
    with Project.create(tmp_path / "p") as p:
        eid = _create(p)
        with pytest.raises(EpisodeError, match=re.escape(message)):
            p.episodes.append(eid, exchanges=[_x(0, **over)])
        assert p.episodes.exchanges(eid) == []
        with pytest.raises(EpisodeError, match="end_reason: expected text"):
            bad: Any = 42
            p.episodes.finish(eid, status="failed", ticks=0, t_ref=None, end_reason=bad)
