"""Stored interactive episodes are byte-identical to the ones recorded before the loop's
speed work (issue 11, Speed): the digests below were computed on the code as it stood before
any optimisation, so a faster loop that changes one stored byte fails here.

Every row of sim_ticks, sim_actions, sim_turns, sim_exchanges and sim_events of each episode
(all columns but the random episode id, in primary-key order) goes into one sha256 per episode.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sim.episode import open_scenario
from sim.interact import run_interactive
from sim.users import PROFILES
from storage import Project

# table → (columns, order); every column but episode_id
_TABLES = {
    "sim_ticks": ("tick, state_hash, diff_json, controller_json, graph_json", "tick"),
    "sim_actions": (
        "idx, tick, source, text, action_json, accepted, failed_json, grounded_json, outcome, "
        "finished_tick",
        "idx",
    ),
    "sim_turns": ("idx, tick, speaker, text, move, flag, flag_target, meta_json", "idx"),
    "sim_exchanges": ("idx, tick, party, sent_json, received_json, latency_s, due_tick", "idx"),
    "sim_events": (
        "idx, event_id, category, type, spec_json, status, trigger_tick, commit_tick, "
        "resolve_tick, resolution, accept_tick, data_json",
        "idx",
    ),
}

# (scenario, persona, timing, assistant options) → digest, recorded before the optimisation
PINNED: dict[tuple[str, str, str, float], str] = {
    (
        "cheeseburger",
        "novice",
        "fixed",
        0.0,
    ): "ca7c319dd8a9680e36cc6e126474510588343b868cdb5c8d75c9d1abb454cf32",
    (
        "cheeseburger",
        "balanced",
        "fixed",
        0.0,
    ): "ae1124e58ff2f157c178e4526ba16bffd4c7ec3f9c34797838792f00602f4cd5",
    (
        "cheeseburger",
        "expert",
        "fixed",
        0.0,
    ): "2b97a475e990ec4a67fd635374d93c0f3bdacd1c3659b00f10a3ee5ba2e4a936",
    (
        "cook-patty",
        "novice",
        "fixed",
        0.0,
    ): "338eac9b568f29b68503ca2180f35b3dc42c70fbaca95c8a62493e9d4315acd7",
    (
        "cook-patty",
        "balanced",
        "fixed",
        0.0,
    ): "f3d4b1ff02d3d70cf8d5f5a266545f03997ad278b26eadc2b7cb3f762f15646b",
    (
        "cook-patty",
        "expert",
        "fixed",
        0.0,
    ): "4f771ff09560b8f1ce4abd47e8fdf2e364a048a2ca0171d1a490f97ebe553538",
    (
        "prep-board",
        "novice",
        "fixed",
        0.0,
    ): "a70df23b13cfa94d483bf674ddd4eb606c37aa57bad75a6c37c12ad589f77f15",
    (
        "prep-board",
        "balanced",
        "fixed",
        0.0,
    ): "303c4acd4fca9de1fb03088c5643034e9241f995e4688515a8c8a244c8774a06",
    (
        "prep-board",
        "expert",
        "fixed",
        0.0,
    ): "7fd29a0f910eb85382688927e740a43b97b94d424a8350ac61c823f19636ac56",
    (
        "cook-patty",
        "balanced",
        "measured",
        1.25,
    ): "908e8bd19f2c28c751285da0a87a33845c8b3b9a1f2f2992cef7957e358769ce",
    (
        "cheeseburger",
        "expert",
        "measured",
        0.35,
    ): "0b1150caf2b09c31fa9a1aa286a6e760cbe8f2e45f9e2caa9f468a1c0c9a8a6d",
}


def episode_digest(project: Project, eid: str) -> str:
    h = hashlib.sha256()
    for table, (cols, order) in _TABLES.items():
        rows = project.db.execute(
            f"SELECT {cols} FROM {table} WHERE episode_id = ? ORDER BY {order}", [eid]
        ).fetchall()
        h.update(table.encode())
        for r in rows:
            h.update(json.dumps(list(r), separators=(",", ":")).encode())
            h.update(b"\n")
    return h.hexdigest()


def _cases() -> list[tuple[str, str, str, float]]:
    return [
        *((s, p, "fixed", 0.0) for s in ("cheeseburger", "cook-patty", "prep-board")
          for p in ("novice", "balanced", "expert")),
        ("cook-patty", "balanced", "measured", 1.25),
        ("cheeseburger", "expert", "measured", 0.35),
    ]  # fmt: skip


@pytest.mark.parametrize("case", _cases(), ids=lambda c: "-".join(map(str, c)))
def test_stored_episode_is_byte_identical(
    case: tuple[str, str, str, float], tmp_path: Path
) -> None:
    scenario, persona, timing, latency = case
    project = Project.create(tmp_path / "p")
    kw: dict[str, Any] = {"timing": timing}
    if latency:
        kw["assistant_options"] = {"latency_s": latency}
    ep = run_interactive(
        bound=open_scenario(scenario), persona=PROFILES[persona], project=project, **kw
    )
    assert ep.episode_id is not None
    counts = {
        t: project.db.execute(
            f"SELECT COUNT(*) FROM {t} WHERE episode_id = ?", [ep.episode_id]
        ).fetchone()[0]
        for t in _TABLES
    }
    assert counts["sim_ticks"] > 0 and counts["sim_exchanges"] > 0 and counts["sim_events"] > 0
    assert episode_digest(project, ep.episode_id) == PINNED[case]
