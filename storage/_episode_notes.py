"""A person's note on an episode (``sim_episode_notes``, v9), stored with undo.

Each :meth:`EpisodeNotes.set_note` is one user action: validated first, written in one
transaction together with its history entry on the writer's stack (the rater id), so Edit → Undo
takes it back like a gate decision. A note is trimmed text; an empty one is no note, and setting
it deletes the row (undo brings the old text back). Deleting the episode deletes its note.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storage._db import write
from storage._episode_records import EpisodeError
from storage._history import Changeset, check_scope, now

if TYPE_CHECKING:
    from storage._project import Project

_TABLE = "sim_episode_notes"


@dataclass(frozen=True)
class NoteRecord:
    """One episode's note and when it was last written (UTC)."""

    episode_id: str
    note: str
    updated: str


class EpisodeNotes:
    """Read and write the notes people keep on episodes."""

    def __init__(self, project: Project) -> None:
        # The project: ids resolve (prefixes too) through its Episodes; edits go on its History.
        self._project = project
        self._db = project.db

    def set_note(self, episode_id: str, text: str, *, scope: str) -> None:
        """Replace the episode's note with ``text`` (trimmed; empty clears it) on ``scope``'s
        undo stack. Writing the note already stored records nothing."""
        if not isinstance(text, str):
            raise EpisodeError(f"note: expected text, got {text!r:.80}")
        scope = check_scope(scope, EpisodeError)
        text = text.strip()
        with write(self._db):
            eid = self._project.episodes._resolve(episode_id)
            current = self.note(eid)
            if (current.note if current else "") == text:
                return
            cs = Changeset(self._db)
            if text:
                cs.put(_TABLE, {"episode_id": eid, "note": text, "updated": now()})
                label = f"note on episode {eid[:8]}"
            else:
                cs.delete(_TABLE, eid)
                label = f"clear note on episode {eid[:8]}"
            self._project.history.record(scope, label, cs)

    def note(self, episode_id: str) -> NoteRecord | None:
        """The episode's note, or None when it has none."""
        eid = self._project.episodes._resolve(episode_id)
        row = self._db.execute(
            f"SELECT episode_id, note, updated FROM {_TABLE} WHERE episode_id = ?", [eid]
        ).fetchone()
        return None if row is None else NoteRecord(*row)

    def all(self) -> builtins.dict[str, NoteRecord]:
        """Every note, by episode id (one query, for a list of all episodes)."""
        rows = self._db.execute(f"SELECT episode_id, note, updated FROM {_TABLE}").fetchall()
        return {str(r[0]): NoteRecord(*r) for r in rows}
