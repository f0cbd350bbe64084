"""Episode batches: the planned episodes of a manifest, their jobs, stored episodes, attributions.

A batch is planned whole in one transaction (:meth:`Batches.create`): one ``sim_batch_cells``
row per run of each cell. Jobs are linked to their rows once queued, and a job that ran an
episode links it with :meth:`Batches.store_episode` inside the transaction that completes the
job. The primary key and the unique episode index make that link exactly-once in the database
itself: a second episode for the same cell (a job re-run after its worker was killed past its
write) is refused with :class:`BatchError`, and the whole job transaction rolls back with it.

Failure attributions are kept per episode: proposed from the trace by the metrics, edited by a
person; a proposal never overwrites an edit, and an edit is an undoable change on the person's
history (a proposal is not: it is the metrics' output, recomputed at will). Batch ids may be
shortened to a unique prefix of at least 6 characters, as episode ids can.
"""

from __future__ import annotations

import builtins
import difflib
import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from storage._db import ids_with_prefix, write
from storage._history import Changeset, check_scope, now
from storage._interaction_records import (
    ATTRIBUTION_PARTIES,
    AmbiguousBatchError,
    AttributionParty,
    AttributionRecord,
    BatchCellRecord,
    BatchError,
    BatchNotFoundError,
    BatchRecord,
    cell_row,
    check_reason,
    one_of,
)
from storage._jobs import JobStatus

if TYPE_CHECKING:
    from storage._project import Project

MIN_PREFIX = 6
_PARAMS = ("scenario", "persona", "assistant", "timing")
_CELL_COLUMNS = "cell, run, scenario, persona, assistant, timing, seed, job_id, episode_id"
_ATTRIBUTION_COLUMNS = "episode_id, party, reason, source, updated"


class Batches:
    """Plan batches, link their jobs and episodes, count progress, attribute failures."""

    def __init__(self, project: Project) -> None:
        # The project: episode ids resolve through its Episodes, prefixes included.
        self._project = project
        self._db = project.db

    # ---- writers -------------------------------------------------------------------------
    def create(
        self, name: str, manifest: Mapping[str, Any], cells: Sequence[BatchCellRecord]
    ) -> str:
        """Plan a batch: one row per run of each cell (one transaction); returns its id.

        Every run of a cell must name the same scenario, persona, assistant and timing.
        """
        if not isinstance(name, str) or not name.strip():
            raise BatchError(f"name: expected a non-empty name, got {name!r}")
        try:
            manifest_json = json.dumps(dict(manifest), sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise BatchError(f"manifest: not JSON-serialisable ({err})") from None
        if not cells:
            raise BatchError("cells: a batch needs at least one planned episode")
        rows = [cell_row(c, k) for k, c in enumerate(cells)]
        seen: set[tuple[int, int]] = set()
        params: dict[int, tuple[int, tuple[Any, ...]]] = {}
        for k, r in enumerate(rows):
            if (r[0], r[1]) in seen:
                raise BatchError(f"cells[{k}]: cell {r[0]} run {r[1]} appears twice")
            seen.add((r[0], r[1]))
            first_run, first = params.setdefault(r[0], (r[1], r[2:6]))
            for name_, want, got in zip(_PARAMS, first, r[2:6], strict=True):
                if want != got:
                    raise BatchError(
                        f"cells[{k}].{name_}: cell {r[0]} is {want!r} in run {first_run} but "
                        f"{got!r} in run {r[1]}; every run of a cell has the same settings"
                    )
        batch_id = uuid.uuid4().hex
        db = self._db
        with write(db):
            db.execute(
                "INSERT INTO sim_batches (id, name, manifest_json, created, cells) "
                "VALUES (?, ?, ?, ?, ?)",
                [batch_id, name, manifest_json, now(), len(params)],
            )
            db.conn.executemany(
                "INSERT INTO sim_batch_cells (batch_id, cell, run, scenario, persona, assistant, "
                "timing, seed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(batch_id, *r) for r in rows],
            )
        return batch_id

    def set_job(self, batch_id: str, cell: int, run: int, job_id: int) -> None:
        """Link the job that runs one planned episode (replacing an earlier job's link)."""
        self.set_jobs(batch_id, {(cell, run): job_id})

    def set_jobs(self, batch_id: str, jobs: Mapping[tuple[int, int], int]) -> None:
        """Link many ``(cell, run) -> job id`` at once, in one transaction (all or nothing)."""
        db = self._db
        with write(db):
            bid = self._resolve(batch_id)
            for (cell, run), job_id in jobs.items():
                if not isinstance(job_id, int) or isinstance(job_id, bool):
                    raise BatchError(f"job_id: expected a job id, got {job_id!r}")
                if db.execute("SELECT 1 FROM jobs WHERE id = ?", [job_id]).fetchone() is None:
                    raise BatchError(f"job_id: no job {job_id} in this project")
                cur = db.execute(
                    "UPDATE sim_batch_cells SET job_id = ? WHERE batch_id = ? AND cell = ? "
                    "AND run = ?",
                    [job_id, bid, cell, run],
                )
                if cur.rowcount != 1:
                    raise BatchError(
                        f"cell {cell!r} run {run!r}: not planned in batch {bid}; nothing was "
                        "written"
                    )

    def store_episode(self, batch_id: str, cell: int, run: int, episode_id: str) -> None:
        """Link the episode stored for one planned run; refuses a second one for that run.

        Call it in the transaction that writes the episode (a job's ``JobOutcome.write``): the
        refusal then rolls back the episode along with everything else the job wrote.
        """
        db = self._db
        with write(db):
            bid = self._resolve(batch_id)
            eid = self._project.episodes._resolve(episode_id)
            stored = self._cell_row(bid, cell, run)[8]
            if stored is not None:
                raise BatchError(
                    f"batch {bid}: cell {cell} run {run} already has episode {stored}; each "
                    f"planned run is stored once (episode {eid} was not stored)"
                )
            try:
                db.execute(
                    "UPDATE sim_batch_cells SET episode_id = ? WHERE batch_id = ? AND cell = ? "
                    "AND run = ? AND episode_id IS NULL",
                    [eid, bid, cell, run],
                )
            except sqlite3.IntegrityError:
                where = db.execute(
                    "SELECT batch_id, cell, run FROM sim_batch_cells WHERE episode_id = ?", [eid]
                ).fetchone()
                raise BatchError(
                    f"episode {eid} is already stored in batch {where[0]} as cell {where[1]} "
                    f"run {where[2]}; one episode fills one planned run"
                ) from None

    def propose(self, episode_id: str, party: AttributionParty, reason: str) -> bool:
        """Store the attribution proposed from the trace; False (nothing written) if a person
        already edited this episode's attribution."""
        party = _party(party)
        reason = check_reason(reason)
        with write(self._db):
            eid = self._project.episodes._resolve(episode_id)
            cur = self._db.execute(
                f"INSERT INTO sim_attributions ({_ATTRIBUTION_COLUMNS}) "
                "VALUES (?, ?, ?, 'proposed', ?) ON CONFLICT (episode_id) DO UPDATE SET "
                "party = excluded.party, reason = excluded.reason, updated = excluded.updated "
                "WHERE sim_attributions.source = 'proposed'",
                [eid, party, reason, now()],
            )
            return cur.rowcount == 1

    def edit_attribution(
        self, episode_id: str, party: AttributionParty, reason: str, *, scope: str
    ) -> None:
        """A person's attribution: replaces any proposal, and later proposals leave it alone.

        An undoable change on ``scope``'s stack (the rater id), recorded in the same transaction;
        confirming the attribution already stored changes nothing and records nothing.
        """
        party = _party(party)
        reason = check_reason(reason)
        scope = check_scope(scope, BatchError)
        with write(self._db):
            eid = self._project.episodes._resolve(episode_id)
            current = self.attribution(eid)
            if current is not None and current == AttributionRecord(
                eid, party, reason, "edited", current.updated
            ):
                return
            cs = Changeset(self._db)
            cs.put(
                "sim_attributions",
                {"episode_id": eid, "party": party, "reason": reason, "source": "edited",
                 "updated": now()},
            )  # fmt: skip
            self._project.history.record(scope, f"attribute episode {eid[:8]} to {party}", cs)

    # ---- readers -------------------------------------------------------------------------
    def get(self, batch_id: str) -> BatchRecord:
        """The batch with this id or unique id prefix (>= 6 characters)."""
        bid = self._resolve(batch_id)
        row = self._db.execute(
            "SELECT id, name, manifest_json, created, cells FROM sim_batches WHERE id = ?", [bid]
        ).fetchone()
        return _batch(row)

    def list(self) -> builtins.list[BatchRecord]:
        """Every batch, newest first."""
        rows = self._db.execute(
            "SELECT id, name, manifest_json, created, cells FROM sim_batches "
            "ORDER BY created DESC, rowid DESC"
        ).fetchall()
        return [_batch(r) for r in rows]

    def cells(self, batch_id: str) -> builtins.list[BatchCellRecord]:
        """The planned episodes, by cell then run."""
        bid = self._resolve(batch_id)
        rows = self._db.execute(
            f"SELECT {_CELL_COLUMNS} FROM sim_batch_cells WHERE batch_id = ? ORDER BY cell, run",
            [bid],
        ).fetchall()
        return [BatchCellRecord(*r) for r in rows]

    def cell(self, batch_id: str, cell: int, run: int) -> BatchCellRecord:
        """One planned episode (what a job reads to learn whether its run is already stored)."""
        return BatchCellRecord(*self._cell_row(self._resolve(batch_id), cell, run))

    def status(self, batch_id: str) -> dict[str, int]:
        """Counts of planned episodes: ``planned``, ``stored`` (an episode is linked), and per
        state of their jobs (``queued`` … ``cancelled``; ``unqueued``: no job linked)."""
        bid = self._resolve(batch_id)
        planned, stored = self._db.execute(
            "SELECT COUNT(*), COUNT(episode_id) FROM sim_batch_cells WHERE batch_id = ?", [bid]
        ).fetchone()
        counts = {"planned": int(planned), "stored": int(stored), "unqueued": 0}
        counts |= {s.value: 0 for s in JobStatus}
        for state, n in self._db.execute(
            "SELECT COALESCE(j.status, 'unqueued'), COUNT(*) FROM sim_batch_cells c "
            "LEFT JOIN jobs j ON j.id = c.job_id WHERE c.batch_id = ? GROUP BY 1",
            [bid],
        ).fetchall():
            counts[str(state)] = int(n)
        return counts

    def attribution(self, episode_id: str) -> AttributionRecord | None:
        """One episode's attribution, or None if none was proposed or edited."""
        eid = self._project.episodes._resolve(episode_id)
        row = self._db.execute(
            f"SELECT {_ATTRIBUTION_COLUMNS} FROM sim_attributions WHERE episode_id = ?", [eid]
        ).fetchone()
        return None if row is None else AttributionRecord(*row)

    def attributions(
        self, batch_id: str, party: AttributionParty | None = None
    ) -> builtins.list[AttributionRecord]:
        """The attributions of the batch's stored episodes (by cell, run), or one party's."""
        bid = self._resolve(batch_id)
        args: builtins.list[Any] = [bid]
        where = ""
        if party is not None:
            args.append(_party(party))
            where = " AND a.party = ?"
        rows = self._db.execute(
            "SELECT a.episode_id, a.party, a.reason, a.source, a.updated "
            "FROM sim_batch_cells c JOIN sim_attributions a ON a.episode_id = c.episode_id "
            f"WHERE c.batch_id = ?{where} ORDER BY c.cell, c.run",
            args,
        ).fetchall()
        return [AttributionRecord(*r) for r in rows]

    def attributions_by_episode(self) -> dict[str, AttributionRecord]:
        """Every stored attribution, by episode id (one query, for a list of all episodes)."""
        rows = self._db.execute(f"SELECT {_ATTRIBUTION_COLUMNS} FROM sim_attributions")
        return {str(r[0]): AttributionRecord(*r) for r in rows.fetchall()}

    def cells_by_episode(self) -> dict[str, BatchCellRecord]:
        """The planned run each batch episode filled, by episode id (one query)."""
        rows = self._db.execute(
            f"SELECT {_CELL_COLUMNS} FROM sim_batch_cells WHERE episode_id IS NOT NULL"
        ).fetchall()
        return {str(r[8]): BatchCellRecord(*r) for r in rows}

    # ---- helpers -------------------------------------------------------------------------
    def _cell_row(self, bid: str, cell: int, run: int) -> Any:
        row = self._db.execute(
            f"SELECT {_CELL_COLUMNS} FROM sim_batch_cells WHERE batch_id = ? AND cell = ? "
            "AND run = ?",
            [bid, cell, run],
        ).fetchone()
        if row is None:
            raise BatchError(f"cell {cell!r} run {run!r}: not planned in batch {bid}")
        return row

    def _resolve(self, batch_id: str) -> str:
        """The full id for an id or a unique prefix of at least :data:`MIN_PREFIX` characters."""
        if not isinstance(batch_id, str) or not batch_id:
            raise BatchNotFoundError(f"batch id: expected a batch id, got {batch_id!r}")
        db = self._db
        if db.execute("SELECT 1 FROM sim_batches WHERE id = ?", [batch_id]).fetchone():
            return batch_id
        prefix = batch_id.lower()
        if len(prefix) >= MIN_PREFIX:
            rows = ids_with_prefix(db, "sim_batches", prefix, "id, name")
            if len(rows) == 1:
                return str(rows[0][0])
            if rows:
                more = ", …" if len(rows) > 2 else ""
                named = ", ".join(f"{r[0]} ({r[1]})" for r in rows[:2])
                raise AmbiguousBatchError(
                    f"batch id: {batch_id!r} starts more than one batch id ({named}{more}); "
                    "give more characters"
                )
        raise BatchNotFoundError(self._not_found(batch_id, prefix))

    def _not_found(self, batch_id: str, prefix: str) -> str:
        known = self._db.execute(
            "SELECT id, name FROM sim_batches ORDER BY created DESC, rowid DESC"
        ).fetchall()
        if not known:
            return f"batch id: no batch {batch_id!r}: this project has no batches yet"
        short = (
            f" (a shortened id needs at least {MIN_PREFIX} characters)"
            if len(prefix) < MIN_PREFIX
            else ""
        )
        # Close matches by id prefix or by name (people remember the name they gave);
        # otherwise the newest few, so the message always shows what does exist.
        names = {str(r[0]): str(r[1]) for r in known}
        by_id = difflib.get_close_matches(prefix, [i[: len(prefix)] for i in names], n=3)
        close = [i for i in names if i[: len(prefix)] in by_id]
        by_name = difflib.get_close_matches(batch_id, list(names.values()), n=3)
        close += [i for i in names if names[i] in by_name]
        shown = list(dict.fromkeys(close))[:3] or list(names)[:3]
        listed = ", ".join(f"{i[:8]} ({names[i]})" for i in shown)
        label = "close matches" if close else "newest"
        return f"batch id: no batch {batch_id!r} in this project{short}; {label}: {listed}"


def _party(party: object) -> AttributionParty:
    return cast(AttributionParty, one_of(ATTRIBUTION_PARTIES, party, "party", BatchError))


def _batch(r: Sequence[Any]) -> BatchRecord:
    return BatchRecord(
        id=r[0], name=r[1], manifest=dict(json.loads(r[2])), created=r[3], cells=int(r[4])
    )
