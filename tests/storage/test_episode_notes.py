"""A person's failure attribution and note on an episode (schema v9): stored with undo/redo on the
rater's history, like every other user change, and gone with their episode."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotation import UserError
from storage import (
    AttributionRecord,
    BatchCellRecord,
    BatchError,
    EpisodeError,
    EpisodeNotFoundError,
    NoteRecord,
    Project,
    episode_rows,
)
from storage._db import connect, migrate, write
from storage._history import Changeset
from storage._schema import MIGRATIONS

R = "alice"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with Project.create(tmp_path / "p") as p:
        yield p


def _episode(p: Project, seed: int = 1, config: dict[str, object] | None = None) -> str:
    return p.episodes.create(
        scenario="burger", scenario_sha="s", family="kitchen", mode="symbolic", agent="oracle",
        seed=seed, delta=1.0, contract_json="{}", contract_hash="h", config=config or {},
    )  # fmt: skip


def _attribution_rows(p: Project) -> list[tuple[object, ...]]:
    return [tuple(r) for r in p.db.execute("SELECT * FROM sim_attributions ORDER BY 1")]


def test_attribution_edit_undoes_to_the_proposal_and_redoes(project: Project) -> None:
    b, h = project.batches, project.history
    eid = _episode(project)
    assert b.propose(eid, "assistant", "missed the step at tick 12")
    proposed = b.attribution(eid)
    b.edit_attribution(eid, "user", "ignored correct advice", scope=R)
    edited = b.attribution(eid)
    assert isinstance(edited, AttributionRecord)
    assert (edited.party, edited.reason, edited.source) == ("user", "ignored correct advice",
                                                            "edited")  # fmt: skip
    assert h.undo_label(R) == f"attribute episode {eid[:8]} to user"
    b.edit_attribution(eid, "user", "ignored correct advice", scope=R)  # confirmed again
    assert b.attribution(eid) == edited  # not even its time moved: nothing to undo twice
    assert project.db.execute("SELECT COUNT(*) FROM history").fetchone()[0] == 1
    assert h.undo_label("bob") is None  # another rater's stack is their own
    assert h.undo(R) == f"attribute episode {eid[:8]} to user"
    assert b.attribution(eid) == proposed  # the proposal, exactly as it was
    assert b.propose(eid, "none", "re-proposed")  # a proposal again, so proposals may replace it
    assert h.redo(R) == f"attribute episode {eid[:8]} to user"
    assert b.attribution(eid) == edited
    # on an episode nobody had attributed: undo removes the row
    other = _episode(project, 2)
    b.edit_attribution(other[:8], "environment", "the bun slid off", scope=R)
    assert b.attribution(other) is not None
    h.undo(R)
    assert b.attribution(other) is None


def test_bad_party_or_reason_is_refused_leaving_the_row_as_it_was(project: Project) -> None:
    b = project.batches
    eid = _episode(project)
    b.propose(eid, "assistant", "late reply")
    before = _attribution_rows(project)
    with pytest.raises(BatchError, match="party: 'robot' is not one of assistant, user") as err:
        b.edit_attribution(eid, "robot", "x", scope=R)  # type: ignore[arg-type]
    assert isinstance(err.value, UserError)
    with pytest.raises(BatchError, match="reason: expected text"):
        b.edit_attribution(eid, "user", None, scope=R)  # type: ignore[arg-type]
    with pytest.raises(EpisodeNotFoundError):
        b.edit_attribution("f" * 32, "user", "x", scope=R)
    assert _attribution_rows(project) == before
    assert project.history.undo_label(R) is None  # nothing recorded either


def test_note_set_clear_undo_redo(project: Project) -> None:
    notes, h = project.notes, project.history
    eid = _episode(project)
    assert notes.note(eid) is None
    notes.set_note(eid[:6], "  gripper slipped at t40 ", scope=R)
    first = notes.note(eid)
    assert isinstance(first, NoteRecord)
    assert (first.episode_id, first.note) == (eid, "gripper slipped at t40")  # trimmed
    assert first.updated.endswith("+00:00")
    assert h.undo_label(R) == f"note on episode {eid[:8]}"
    notes.set_note(eid, "gripper slipped at t40; user looked away", scope=R)
    notes.set_note(eid, "same", scope=R)
    notes.set_note(eid, "same", scope=R)  # unchanged: no second entry to undo
    notes.set_note(eid, "", scope=R)  # clearing deletes the row
    assert notes.note(eid) is None
    assert project.db.execute("SELECT COUNT(*) FROM sim_episode_notes").fetchone()[0] == 0
    assert h.undo_label(R) == f"clear note on episode {eid[:8]}"
    h.undo(R)
    assert notes.note(eid).note == "same"  # type: ignore[union-attr]
    h.undo(R)
    h.undo(R)
    assert notes.note(eid) == first
    h.undo(R)
    assert notes.note(eid) is None and h.undo_label(R) is None
    for _ in range(4):
        h.redo(R)
    assert notes.note(eid) is None and h.redo_label(R) is None
    h.undo(R)
    assert notes.all() == {eid: notes.note(eid)}


def test_bad_notes_are_refused_by_field(project: Project) -> None:
    eid = _episode(project)
    with pytest.raises(EpisodeError, match="note: expected text"):
        project.notes.set_note(eid, 3, scope=R)  # type: ignore[arg-type]
    with pytest.raises(EpisodeNotFoundError, match="no episode"):
        project.notes.set_note("0" * 32, "x", scope=R)
    with pytest.raises(EpisodeError, match="scope: expected"):
        project.notes.set_note(eid, "x", scope="")
    assert project.history.undo_label(R) is None


def test_edits_survive_reopen_and_undo_there(tmp_path: Path) -> None:
    root = tmp_path / "p"
    with Project.create(root) as p:
        eid = _episode(p)
        p.notes.set_note(eid, "looked at video", scope=R)
        p.batches.edit_attribution(eid, "environment", "grasp failed", scope=R)
    with Project.open(root) as p:
        assert p.notes.note(eid).note == "looked at video"  # type: ignore[union-attr]
        assert p.batches.attribution(eid).party == "environment"  # type: ignore[union-attr]
        assert p.history.undo(R) == f"attribute episode {eid[:8]} to environment"
        assert p.batches.attribution(eid) is None
    with Project.open(root) as p:
        assert p.history.undo(R) == f"note on episode {eid[:8]}"
        assert p.notes.note(eid) is None


def test_id_keyed_history_keeps_its_format_and_still_undoes(project: Project) -> None:
    """A history row as stored before v9 (keyed by ``id``) undoes next to the new ones."""
    eid = _episode(project)
    project.annotations.ensure_rater(R)
    # a row written by hand in the stored format of every earlier version
    old = {
        "table": "raters",
        "id": "carol",
        "before": None,
        "after": {"id": "carol", "name": "Carol", "created_at": "2025-01-01T00:00:00+00:00"},
    }
    with write(project.db):
        project.db.execute("INSERT INTO raters (id, name, created_at) VALUES (?, ?, ?)",
                           ["carol", "Carol", "2025-01-01T00:00:00+00:00"])  # fmt: skip
        project.db.table("history").insert(
            {"scope": R, "label": "add rater carol", "changes": json.dumps([old]),
             "state": "done", "created_at": "2025-01-01T00:00:00+00:00"}
        )  # fmt: skip
    project.notes.set_note(eid, "n", scope=R)
    (changes,) = project.db.execute(
        "SELECT changes FROM history WHERE label LIKE 'note on%'"
    ).fetchone()
    (ch,) = json.loads(changes)
    assert set(ch) == {"table", "id", "before", "after"}  # the same shape, keyed the same way
    assert (ch["table"], ch["id"]) == ("sim_episode_notes", eid)
    assert project.history.undo(R) == f"note on episode {eid[:8]}"
    assert project.history.undo(R) == "add rater carol"
    assert project.db.execute("SELECT COUNT(*) FROM raters WHERE id = 'carol'").fetchone()[0] == 0
    assert project.history.redo(R) == "add rater carol"
    assert project.db.table("raters").get("carol")["name"] == "Carol"


def test_a_composite_key_table_is_refused_by_changeset(project: Project) -> None:
    with pytest.raises(ValueError, match="sim_metrics: undo needs a single-column primary key"):
        Changeset(project.db).row("sim_metrics", "x")


def test_deleting_the_episode_takes_note_and_attribution_and_undo_stays_safe(
    project: Project,
) -> None:
    eid, kept = _episode(project), _episode(project, 2)
    project.notes.set_note(eid, "first", scope=R)
    project.batches.edit_attribution(eid, "user", "why", scope=R)
    project.notes.set_note(kept, "kept", scope=R)
    project.notes.set_note(eid, "second", scope=R)
    project.episodes.delete(eid)
    assert project.notes.note(kept) is not None and set(project.notes.all()) == {kept}
    for table in ("sim_episode_notes", "sim_attributions"):
        n = project.db.execute(f"SELECT COUNT(*) FROM {table} WHERE episode_id = ?", [eid])
        assert n.fetchone()[0] == 0
    # undoing edits of the deleted episode brings nothing back (its rows went with it) …
    assert project.history.undo(R) == f"note on episode {eid[:8]}"
    assert project.db.execute("SELECT COUNT(*) FROM sim_episode_notes").fetchone()[0] == 1
    # … and the stack goes on to the edits of episodes that are still there
    assert project.history.undo(R) == f"note on episode {kept[:8]}"
    assert project.notes.note(kept) is None


def test_v8_project_upgrades_to_v9(tmp_path: Path) -> None:
    root = tmp_path / "v8"
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:8], root / "project.sqlite")  # a project written by schema v8
    assert "sim_episode_notes" not in db.table_names()
    db.close()
    with Project.open(root) as p:
        assert len(MIGRATIONS) >= 9
        assert p.db.table("meta").get("schema_version")["value"] == str(len(MIGRATIONS))
        assert p.db.table("sim_episode_notes").pks == ["episode_id"]


def test_episode_rows_gather_what_the_browser_lists(project: Project) -> None:
    b = project.batches
    cells = [BatchCellRecord(cell=0, run=0, scenario="burger", persona="novice",
                             assistant="gpt-small", timing="fixed", seed=1)]  # fmt: skip
    bid = b.create("pilot", {"format": "workbench-batch/1"}, cells)
    in_batch, loose = _episode(project, 1), _episode(project, 2, {"arm": "wb6"})
    b.store_episode(bid, 0, 0, in_batch)
    project.episodes.set_metrics(in_batch, {"success": 0.0, "detection_recall": 0.5, "x": 9.0})
    b.propose(in_batch, "assistant", "missed it")
    project.notes.set_note(loose, "fine", scope=R)
    rows = {r.episode.id: r for r in episode_rows(project, metrics=("success", "detection_recall"))}
    assert set(rows) == {in_batch, loose}
    a, c = rows[in_batch], rows[loose]
    assert a.metrics == {"success": 0.0, "detection_recall": 0.5}  # only the names asked for
    assert a.cell is not None and a.cell.assistant == "gpt-small" and a.cell.persona == "novice"
    assert a.attribution is not None and a.attribution.source == "proposed" and a.note is None
    assert c.metrics == {} and c.cell is None and c.attribution is None
    assert c.note is not None and c.note.note == "fine" and c.episode.config == {"arm": "wb6"}
    assert [r.episode.id for r in episode_rows(project)] == [loose, in_batch]  # newest first
