"""The project's continuity scans (``continuity_scans``, v11): one per video file, by sha256.

A scan is evidence about a file, not a decision anyone made, so it has no undo: saving a new
one replaces the old. :meth:`ContinuityScans.get` returns only a scan of the current version
(signals and thresholds); an older one is reported as missing, so it is made again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from storage._db import write
from storage._history import now
from storage.continuity import Scan, load_thresholds, scan_version

if TYPE_CHECKING:
    from storage._project import Project

_TABLE = "continuity_scans"


class ContinuityScans:
    def __init__(self, project: Project) -> None:
        self._project = project
        self._db = project.db

    @property
    def current_version(self) -> str:
        return scan_version(load_thresholds())

    def get(self, sha256: str) -> Scan | None:
        """The stored scan of the file, if it is of the current version."""
        row = self._db.execute(
            f"SELECT version, data FROM {_TABLE} WHERE sha256 = ?", [sha256]
        ).fetchone()
        if row is None or row[0] != self.current_version:
            return None
        return Scan.from_dict(json.loads(row[1]))

    def save(self, sha256: str, scan: Scan) -> None:
        """Store ``scan`` as the file's (one transaction), replacing any earlier one."""
        data = json.dumps(scan.to_dict(), allow_nan=False)
        with write(self._db):
            self._db.table(_TABLE).upsert(
                {"sha256": sha256, "version": scan.version, "windows": len(scan.windows),
                 "data": data, "scanned_at": now()}, pk="sha256",
            )  # fmt: skip

    def missing(self, shas: list[str]) -> list[str]:
        """Which of ``shas`` have no current scan."""
        version = self.current_version
        have = {r[0] for r in self._db.execute(
            f"SELECT sha256 FROM {_TABLE} WHERE version = ?", [version])}  # fmt: skip
        return [s for s in shas if s not in have]
