"""Stored interactive episodes are byte-identical to the ones recorded before the loop's
speed work (issue 11, Speed): the digests below were computed on the code as it stood before
any optimisation, so a faster loop that changes one stored byte fails here.

Re-pinned once, on purpose, when an idle user learned to say when it next acts
(``UserTurn.wake``): 10-60 % fewer user exchanges are stored, and every tick, action, turn,
event and assistant exchange was checked unchanged against the earlier pin before re-pinning.

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

# (scenario, persona, timing, assistant options) → digest
PINNED: dict[tuple[str, str, str, float], str] = {
    (
        "cheeseburger",
        "novice",
        "fixed",
        0.0,
    ): "aa5ff3030fe9a55f5808b879311307e5664e373243e76f69f2a8bf4912d5ae0f",
    (
        "cheeseburger",
        "balanced",
        "fixed",
        0.0,
    ): "b5e5088e5d447d6e9a0b02973a697a6d015c3b19333e401473e9056464ac5e76",
    (
        "cheeseburger",
        "expert",
        "fixed",
        0.0,
    ): "8c76e629ad17703b9515cfbef62fba0dbf6b5a33bc9e7516b90abb45417366ca",
    (
        "cook-patty",
        "novice",
        "fixed",
        0.0,
    ): "ca4c1979e56ae28c20a192596b93ad4f7f95305f571815cf696929219f10d70b",
    (
        "cook-patty",
        "balanced",
        "fixed",
        0.0,
    ): "2f0aa91fb50a5435576528286081bae21b7f931a3dac9c068d53b022b57ae923",
    (
        "cook-patty",
        "expert",
        "fixed",
        0.0,
    ): "b8a9b23c83ee6e213298714144a07eabba2901d40baa29d1286cecb2e7860fda",
    (
        "prep-board",
        "novice",
        "fixed",
        0.0,
    ): "07d4258fe0930d3097cde123e1112db3aa5b224b9e1f3e67d4014dd2dd20cab5",
    (
        "prep-board",
        "balanced",
        "fixed",
        0.0,
    ): "1b001c9fbd006d76c420f397eadfb74f31041dd4098c4f33ba69ee4eceb35d76",
    (
        "prep-board",
        "expert",
        "fixed",
        0.0,
    ): "0a137a8792fcf5470ac8bd70711860e5feadcb07f7a6ee289074a0594b11e2a1",
    (
        "cook-patty",
        "balanced",
        "measured",
        1.25,
    ): "fdb8f8fc21b03e2fd987be756e77079e986271424c4bc2f249590d7f8a07855a",
    (
        "cheeseburger",
        "expert",
        "measured",
        0.35,
    ): "869ede614366b60255f7846ec843e4be5a6f340633b711927e939dece85fae59",
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
