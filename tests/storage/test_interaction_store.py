"""Interactive episodes (schema v6): turns, scheduled events and the audited exchanges."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storage import (
    EpisodeError,
    EpisodeNotFoundError,
    EventRecord,
    ExchangeRecord,
    Project,
    TickRecord,
    TurnRecord,
)
from storage._db import connect, migrate
from storage._schema import MIGRATIONS

V6_TABLES = ("sim_turns", "sim_events", "sim_exchanges", "sim_batches", "sim_batch_cells",
             "sim_attributions")  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with Project.create(tmp_path / "p") as p:
        yield p


def _create(p: Project, **over: Any) -> str:
    args: dict[str, Any] = {
        "scenario": "burger",
        "scenario_sha": "s" * 64,
        "family": "kitchen",
        "mode": "symbolic",
        "agent": "oracle",
        "seed": 3,
        "delta": 1.0,
        "contract_json": "{}",
        "contract_hash": "c" * 64,
        "config": {"persona": "novice"},
    }
    return p.episodes.create(**(args | over))


def _count(p: Project, table: str) -> int:
    return int(p.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _event(idx: int, **over: Any) -> EventRecord:
    args: dict[str, Any] = {
        "idx": idx,
        "event_id": f"e{idx}",
        "category": "error",
        "type": "forgotten_step",
        "spec_json": json.dumps({"id": f"e{idx}", "skip": 1}),
        "status": "resolved",
        "trigger_tick": 10,
        "commit_tick": 12,
        "resolve_tick": 20,
        "resolution": "completed",
        "accept_tick": None,
        "data_json": "{}",
    }
    return EventRecord(**(args | over))


def test_v5_project_upgrades_to_v6_and_keeps_its_episodes(tmp_path: Path) -> None:
    root = tmp_path / "v5"
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:5], root / "project.sqlite")  # a project written by schema v5
    db.execute(
        "INSERT INTO sim_episodes (id, scenario, scenario_sha, family, mode, agent, seed, delta, "
        "status, started, contract_json, contract_hash) VALUES ('ab' || printf('%030d', 1), "
        "'burger', 's', 'kitchen', 'symbolic', 'rule', 1, 1.0, 'completed', 'then', '{}', 'h')"
    )
    for table in V6_TABLES:
        assert table not in db.table_names()
    db.close()
    with Project.open(root) as p:
        assert len(MIGRATIONS) >= 6  # v6 added them
        assert p.db.table("meta").get("schema_version")["value"] == str(len(MIGRATIONS))
        for table in V6_TABLES:
            assert table in p.db.table_names()
        old = p.episodes.list()
        assert len(old) == 1 and old[0].scenario == "burger"
        assert p.episodes.turns(old[0].id) == [] and p.episodes.events(old[0].id) == []


def test_turns_and_exchanges_round_trip_and_upsert_by_idx(project: Project) -> None:
    eps = project.episodes
    eid = _create(project)
    turns = [
        TurnRecord(idx=0, tick=0, speaker="user", text="Let's make a burger.", move="announce"),
        TurnRecord(idx=1, tick=4, speaker="assistant", text="", flag="forgotten_step",
                   flag_target="cheese", meta_json='{"query_tick": 2}'),  # a silent flag
    ]  # fmt: skip
    sent = json.dumps({"tick": 2, "conversation": [{"speaker": "user", "text": "hi"}]})
    exchanges = [
        ExchangeRecord(idx=0, tick=2, party="assistant", sent_json=sent, received_json=None,
                       latency_s=None, due_tick=4),  # still in flight
        ExchangeRecord(idx=1, tick=3, party="user", sent_json='{"reason": "idle"}',
                       received_json='{"utterance": ""}'),
    ]  # fmt: skip
    eps.append(eid, [TickRecord(0, "h0")], turns=turns, exchanges=exchanges)
    assert eps.turns(eid) == turns
    assert eps.exchanges(eid) == exchanges
    assert eps.exchanges(eid[:8], party="user") == [exchanges[1]]
    assert eps.exchanges(eid, party="agent") == []

    # the reply arrives: the same exchange idx is written again, whole
    reply = '{"text": "add the cheese"}'
    back = ExchangeRecord(idx=0, tick=2, party="assistant", sent_json=sent, received_json=reply,
                          latency_s=1.7, due_tick=4)  # fmt: skip
    late = TurnRecord(idx=2, tick=4, speaker="assistant", text="Add the cheese.")
    eps.append(eid, [TickRecord(1, "h1")], turns=[late], exchanges=[back])
    assert eps.exchanges(eid) == [back, exchanges[1]]
    assert eps.turns(eid) == [*turns, late]
    assert _count(project, "sim_exchanges") == 2 and _count(project, "sim_turns") == 3


def test_turns_read_in_idx_order_and_ticks_may_repeat(project: Project) -> None:
    eps = project.episodes
    eid = _create(project)
    batch = [TurnRecord(idx=k, tick=5, speaker="user", text=f"t{k}") for k in (2, 0, 1)]
    eps.append(eid, turns=batch)
    assert [t.idx for t in eps.turns(eid)] == [0, 1, 2]


def test_events_are_replaced_while_running_and_after_finishing(project: Project) -> None:
    eps = project.episodes
    eid = _create(project)
    pending = [_event(0, status="pending", trigger_tick=None, commit_tick=None,
                      resolve_tick=None, resolution=None)]  # fmt: skip
    eps.set_events(eid, pending)
    assert eps.events(eid) == pending
    eps.finish(eid, status="completed", ticks=30, t_ref=25)
    final = [
        _event(0),
        _event(1, event_id="ask-time", category="question", type="", status="resolved",
               trigger_tick=15, commit_tick=None, resolve_tick=15, resolution="asked",
               data_json='{"question": "how long?", "truth": 40}'),
        _event(2, category="request", type="", status="pending", trigger_tick=None,
               commit_tick=None, resolve_tick=None, resolution="not_reached"),
        _event(3, category="error", status="resolved", trigger_tick=3, commit_tick=None,
               resolve_tick=9, resolution="accepted", accept_tick=9),
    ]  # fmt: skip
    eps.set_events(eid, final)
    assert eps.events(eid) == final
    assert _count(project, "sim_events") == 4
    eps.set_events(eid, [])
    assert eps.events(eid) == []


def test_bad_fields_are_named_and_nothing_is_written(project: Project) -> None:
    eps = project.episodes
    eid = _create(project)
    ok = TurnRecord(idx=0, tick=0, speaker="user", text="hi")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"turns": [ok, TurnRecord(1, 0, "robot", "x")]}, r"turns\[1\]\.speaker: 'robot'"),  # type: ignore[arg-type]
        ({"turns": [TurnRecord(0, -1, "user", "x")]}, r"turns\[0\]\.tick: expected an int"),
        ({"turns": [TurnRecord(0, 0, "user", "x", meta_json="{")]}, r"turns\[0\]\.meta_json"),
        ({"turns": [TurnRecord(0, 0, "user", "x", flag="wrong_order")]},
         r"turns\[0\]\.flag: only an assistant turn"),
        ({"turns": [TurnRecord(0, 0, "assistant", "x", flag_target="pan")]},
         r"turns\[0\]\.flag_target: a target needs a flag"),
        ({"turns": [ok, ok]}, "turns: idx 0 appears twice"),
        ({"exchanges": [ExchangeRecord(0, 0, "judge", "{}", None)]},  # type: ignore[arg-type]
         r"exchanges\[0\]\.party: 'judge' is not one of assistant, user, agent"),
        ({"exchanges": [ExchangeRecord(0, 0, "user", "{}", "nope")]},
         r"exchanges\[0\]\.received_json"),
        ({"exchanges": [ExchangeRecord(0, 0, "user", "{}", None, latency_s=-1.0)]},
         r"exchanges\[0\]\.latency_s"),
        ({"exchanges": [ExchangeRecord(0, 0, "user", "{}", None, due_tick=1.5)]},  # type: ignore[arg-type]
         r"exchanges\[0\]\.due_tick"),
    ]  # fmt: skip
    for kwargs, match in cases:
        with pytest.raises(EpisodeError, match=match):
            eps.append(eid, [TickRecord(0, "h0")], **kwargs)
    assert _count(project, "sim_ticks") == _count(project, "sim_turns") == 0
    assert _count(project, "sim_exchanges") == 0

    event_cases: list[tuple[EventRecord, str]] = [
        (_event(0, category="mistake"), r"events\[0\]\.category: 'mistake'"),
        (_event(0, resolution="won"), r"events\[0\]\.resolution: 'won'"),
        (_event(0, status="done"), r"events\[0\]\.status: 'done'"),
        (_event(0, spec_json="{"), r"events\[0\]\.spec_json"),
        (_event(0, event_id=""), r"events\[0\]\.event_id"),
        (_event(0, commit_tick=5), r"events\[0\]\.commit_tick: 5 is before the trigger tick 10"),
        (_event(0, trigger_tick=None), r"events\[0\]\.commit_tick: .*never triggered"),
        (_event(0, resolution="not_reached"), r"events\[0\]\.trigger_tick: .*not_reached"),
    ]  # fmt: skip
    eps.set_events(eid, [_event(0)])
    for event, match in event_cases:
        with pytest.raises(EpisodeError, match=match):
            eps.set_events(eid, [event])
    with pytest.raises(EpisodeError, match="events: event_id 'e0' appears twice"):
        eps.set_events(eid, [_event(0), _event(1, event_id="e0")])
    with pytest.raises(EpisodeError, match="events: idx 0 appears twice"):
        eps.set_events(eid, [_event(0), _event(0, event_id="e1")])
    assert eps.events(eid) == [_event(0)]  # the refused replacements left it as it was
    with pytest.raises(EpisodeNotFoundError):
        eps.set_events("f" * 32, [])
    with pytest.raises(EpisodeError, match="party: 'judge'"):
        eps.exchanges(eid, party="judge")  # type: ignore[arg-type]


def test_database_checks_hold_even_for_raw_writes(project: Project) -> None:
    """The CHECK constraints are the last line: a writer that skips the records is refused."""
    eid = _create(project)
    with pytest.raises(sqlite3.IntegrityError):
        project.db.execute(
            "INSERT INTO sim_turns (episode_id, idx, tick, speaker, text) "
            "VALUES (?, 0, 0, 'x', '')",
            [eid],
        )
    with pytest.raises(sqlite3.IntegrityError):
        project.db.execute(
            "INSERT INTO sim_events (episode_id, idx, event_id, category, type, spec_json, "
            "status, resolution) VALUES (?, 0, 'e', 'error', '', '{}', 'resolved', 'won')",
            [eid],
        )


def test_append_to_a_finished_episode_is_refused_for_turns_too(project: Project) -> None:
    eps = project.episodes
    eid = _create(project)
    eps.finish(eid, status="completed", ticks=0, t_ref=None)
    with pytest.raises(EpisodeError, match="only a running episode can append"):
        eps.append(eid, turns=[TurnRecord(0, 0, "user", "late")])


def test_deleting_an_episode_removes_its_interaction_rows(project: Project) -> None:
    eps = project.episodes
    keep, gone = _create(project), _create(project)
    for eid in (keep, gone):
        eps.append(
            eid,
            turns=[TurnRecord(0, 0, "user", "hi")],
            exchanges=[ExchangeRecord(0, 0, "assistant", "{}", "{}")],
        )
        eps.set_events(eid, [_event(0)])
    eps.delete(gone)
    for table in ("sim_turns", "sim_events", "sim_exchanges"):
        rows = project.db.execute(f"SELECT DISTINCT episode_id FROM {table}").fetchall()
        assert rows == [(keep,)], table
