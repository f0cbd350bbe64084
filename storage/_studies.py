"""Annotation studies: rater profiles, a case-level panel, blind per-rater assignments.

A study is a panel of videos (spec ego2act.md §5.1): the builder picks whole cases, stratified
by domain, and always brings every video of a chosen case, so no within-case selection bias
creeps in. Each panel video goes to up to *k* raters with balanced load, and each rater works
through their videos in their own random order. Everything is seeded, so the same seed gives the
same panel and the same assignments. Calibration (reference answers a rater must match before
production work) lives in :mod:`storage._study_calibration`.

The panel and the calibration set are frozen once assignments exist: changing them afterwards
would silently leave some raters without videos the others have.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import sqlite_utils

from storage._db import write
from storage._history import now
from storage._records import Domain, Rater, Record, Role
from storage._study_calibration import CalibrationMixin, StudyError

HumanSuccessRule = Literal["rated", "max"]
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


class Study(Record):
    """A study's settings. ``human_success_rule`` is spec §9 item 19 ("rated" or "max")."""

    id: str
    name: str
    raters_per_video: int
    seed: int
    human_success_rule: HumanSuccessRule
    created_at: str


class StudyVideo(Record):
    """A video in a study: a panel video, or (``calibration``) one of the training set."""

    video_id: str
    case_id: str
    calibration: bool


class Assignment(Record):
    """One video handed to one rater; ``position`` is 1-based in the rater's own order."""

    study_id: str
    rater_id: str
    video_id: str
    case_id: str
    position: int
    calibration: bool
    status: str  # assigned | exported | returned


@dataclass(frozen=True)
class PanelSelection:
    """What :meth:`Studies.build_panel` chose: case ids per domain, and any shortfall."""

    cases: dict[str, tuple[str, ...]]
    videos_added: int
    short: dict[str, int] = field(default_factory=dict)  # domain → cases missing for per_domain

    def summary(self) -> str:
        parts = [f"{d}: {len(c)}" for d, c in self.cases.items()]
        text = f"{sum(map(len, self.cases.values()))} case(s) ({', '.join(parts)}), "
        text += f"{self.videos_added} video(s) added"
        if self.short:
            text += "; too few cases in " + ", ".join(f"{d} (-{n})" for d, n in self.short.items())
        return text


class Studies(CalibrationMixin):
    """Studies of one project: panels, raters, assignments and calibration."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    # ---- studies and raters -------------------------------------------------------------
    def create(
        self,
        study_id: str,
        name: str = "",
        *,
        raters_per_video: int = 3,
        seed: int = 0,
        human_success_rule: HumanSuccessRule = "rated",
    ) -> Study:
        """Create a study. Its id is shown to raters: keep it neutral (no model names)."""
        if not _ID.match(study_id):
            raise StudyError(f"study id {study_id!r}: use 1–80 letters, digits, '_', '.' or '-'")
        if raters_per_video < 1:
            raise StudyError(f"raters per video must be at least 1, got {raters_per_video}")
        if human_success_rule not in ("rated", "max"):
            raise StudyError(
                f"human-success rule must be 'rated' or 'max', not {human_success_rule!r}"
            )
        config = {
            "raters_per_video": raters_per_video,
            "seed": seed,
            "human_success_rule": human_success_rule,
        }
        with write(self._db):
            if self._db.execute("SELECT 1 FROM studies WHERE id = ?", [study_id]).fetchone():
                raise StudyError(f"study {study_id!r} already exists in this project")
            self._db.table("studies").insert(
                {
                    "id": study_id,
                    "name": name or study_id,
                    "config": json.dumps(config),
                    "created_at": now(),
                }
            )
        return self.study(study_id)

    def study(self, study_id: str) -> Study:
        """The study's settings; raises :class:`StudyError` naming the known studies."""
        row = self._db.execute(
            "SELECT id, name, config, created_at FROM studies WHERE id = ?", [study_id]
        ).fetchone()
        if row is None:
            known = ", ".join(s.id for s in self.studies()) or "none yet"
            raise StudyError(f"no study {study_id!r} in this project (studies: {known})")
        return _study(row)

    def studies(self) -> list[Study]:
        """Every study of the project, by id."""
        rows = self._db.execute(
            "SELECT id, name, config, created_at FROM studies ORDER BY id"
        ).fetchall()
        return [_study(r) for r in rows]

    def add_rater(self, rater_id: str, name: str = "") -> Rater:
        """Create a rater profile, or rename an existing one."""
        if not _ID.match(rater_id):
            raise StudyError(f"rater id {rater_id!r}: use 1–80 letters, digits, '_', '.' or '-'")
        with write(self._db):
            self._db.table("raters").insert(
                {"id": rater_id, "name": name or rater_id, "created_at": now()}, ignore=True
            )
            if name:
                self._db.table("raters").update(rater_id, {"name": name})
        return self.rater(rater_id)

    def rater(self, rater_id: str) -> Rater:
        """A rater profile; raises :class:`StudyError` if there is none."""
        row = self._db.execute("SELECT id, name FROM raters WHERE id = ?", [rater_id]).fetchone()
        if row is None:
            raise StudyError(f"no rater {rater_id!r}; add them first (workbench study add-rater)")
        return Rater(id=row[0], name=row[1] or row[0])

    def raters(self) -> list[Rater]:
        """Every rater profile, by id."""
        rows = self._db.execute("SELECT id, name FROM raters ORDER BY id").fetchall()
        return [Rater(id=r[0], name=r[1] or r[0]) for r in rows]

    # ---- panel --------------------------------------------------------------------------
    def build_panel(
        self,
        study_id: str,
        *,
        per_domain: int,
        seed: int | None = None,
        domains: Sequence[str] | None = None,
    ) -> PanelSelection:
        """Add ``per_domain`` randomly chosen cases per domain, each with all its videos.

        Cases already in the study (panel or calibration) are not candidates. A domain with
        too few cases contributes all it has; the shortfall is reported, not an error. The
        draw depends only on the seed (default: the study's) and the cases in the project.
        """
        seed = self.study(study_id).seed if seed is None else seed
        if per_domain < 1:
            raise StudyError(f"cases per domain must be at least 1, got {per_domain}")
        known = [d.value for d in Domain]
        wanted = list(domains) if domains else known
        unknown = [d for d in wanted if d not in known]
        if unknown:
            raise StudyError(f"unknown domain(s) {unknown}; expected some of {', '.join(known)}")
        taken = {v.case_id for v in self.panel(study_id, calibration=None)}
        chosen: dict[str, tuple[str, ...]] = {}
        short: dict[str, int] = {}
        for domain in wanted:
            pool = [
                r[0]
                for r in self._db.execute(
                    "SELECT id FROM cases WHERE domain = ? ORDER BY id", [domain]
                ).fetchall()
                if r[0] not in taken
            ]
            # One generator per domain: adding a domain later does not reshuffle the others.
            rng = random.Random(f"{seed}|panel|{domain}")
            picked = sorted(rng.sample(pool, min(per_domain, len(pool))))
            if picked:
                chosen[domain] = tuple(picked)
            if len(picked) < per_domain:
                short[domain] = per_domain - len(picked)
        added = self.add_cases(study_id, [c for cs in chosen.values() for c in cs])
        return PanelSelection(chosen, added, short)

    def add_cases(self, study_id: str, case_ids: Iterable[str]) -> int:
        """Add cases to the panel with every one of their videos; returns videos added."""
        self.study(study_id)
        case_ids = list(case_ids)
        with write(self._db):
            self._require_unassigned(study_id, "the panel")
            added = 0
            for case_id in case_ids:
                videos = self._db.execute(
                    "SELECT id FROM videos WHERE case_id = ? ORDER BY id", [case_id]
                ).fetchall()
                if not videos:
                    raise StudyError(f"no case {case_id!r} with videos in this project")
                clash = self._db.execute(
                    "SELECT sv.video_id FROM study_videos sv JOIN videos v ON v.id = sv.video_id "
                    "WHERE sv.study_id = ? AND v.case_id = ? AND sv.calibration = 1",
                    [study_id, case_id],
                ).fetchone()
                if clash:
                    raise StudyError(
                        f"case {case_id!r} provides calibration video {clash[0]}; a panel case "
                        "brings all its videos, so it cannot also be a calibration case"
                    )
                for (video_id,) in videos:
                    cur = self._db.execute(
                        "INSERT OR IGNORE INTO study_videos (study_id, video_id, calibration) "
                        "VALUES (?, ?, 0)",
                        [study_id, video_id],
                    )
                    added += cur.rowcount
        return added

    def panel(self, study_id: str, *, calibration: bool | None = False) -> list[StudyVideo]:
        """The study's videos: panel only (default), calibration only (True) or all (None)."""
        where = "" if calibration is None else f" AND sv.calibration = {int(calibration)}"
        rows = self._db.execute(
            "SELECT sv.video_id, v.case_id, sv.calibration FROM study_videos sv "
            f"JOIN videos v ON v.id = sv.video_id WHERE sv.study_id = ?{where} "
            "ORDER BY v.case_id, sv.video_id",
            [study_id],
        ).fetchall()
        return [StudyVideo(video_id=r[0], case_id=r[1], calibration=bool(r[2])) for r in rows]

    # ---- assignment ---------------------------------------------------------------------
    def assign(
        self,
        study_id: str,
        rater_ids: Sequence[str],
        *,
        seed: int | None = None,
        k: int | None = None,
    ) -> dict[str, int]:
        """Give each panel video to up to ``k`` raters; returns production videos per rater.

        Load is balanced (each video goes to the ``k`` least-loaded raters, ties broken at
        random), every rater also gets the whole calibration set, and each rater's list is
        shuffled on its own: calibration videos first, then production videos.
        """
        study = self.study(study_id)
        seed = study.seed if seed is None else seed
        raters = list(dict.fromkeys(rater_ids))
        if not raters:
            raise StudyError("name at least one rater to assign videos to")
        for r in raters:
            self.rater(r)
        k = study.raters_per_video if k is None else k
        if k < 1:
            raise StudyError(f"raters per video must be at least 1, got {k}")
        videos = [v.video_id for v in self.panel(study_id) if self._rated(study, v.video_id)]
        calib = [v.video_id for v in self.panel(study_id, calibration=True)]
        if not videos:
            raise StudyError(f"study {study_id!r} has no panel videos to assign; build a panel")
        rng = random.Random(f"{seed}|assign")
        rng.shuffle(videos)
        load = dict.fromkeys(raters, 0)
        mine: dict[str, list[str]] = {r: [] for r in raters}
        for video in videos:
            ranked = sorted(raters, key=lambda r: (load[r], rng.random()))
            for r in ranked[: min(k, len(raters))]:
                load[r] += 1
                mine[r].append(video)
        with write(self._db):
            self._require_unassigned(study_id, "assignments")
            for r in raters:
                own = random.Random(f"{seed}|order|{r}")
                cal, prod = sorted(calib), sorted(mine[r])
                own.shuffle(cal)
                own.shuffle(prod)
                for pos, video in enumerate(cal + prod, start=1):
                    self._db.table("assignments").insert(
                        {
                            "study_id": study_id,
                            "rater_id": r,
                            "video_id": video,
                            "position": pos,
                            "status": "assigned",
                            "updated_at": now(),
                        }
                    )
        return {r: len(v) for r, v in mine.items()}

    def assignments(self, study_id: str, rater_id: str) -> list[Assignment]:
        """The rater's videos in their own order (calibration videos first)."""
        rows = self._db.execute(
            "SELECT a.video_id, v.case_id, a.position, sv.calibration, a.status "
            "FROM assignments a JOIN videos v ON v.id = a.video_id "
            "LEFT JOIN study_videos sv ON sv.study_id = a.study_id AND sv.video_id = a.video_id "
            "WHERE a.study_id = ? AND a.rater_id = ? ORDER BY a.position",
            [study_id, rater_id],
        ).fetchall()
        return [
            Assignment(
                study_id=study_id,
                rater_id=rater_id,
                video_id=r[0],
                case_id=r[1],
                position=r[2],
                calibration=bool(r[3]),
                status=r[4],
            )
            for r in rows
        ]

    def assigned_raters(self, study_id: str) -> list[str]:
        """Ids of the raters with assignments in the study."""
        rows = self._db.execute(
            "SELECT DISTINCT rater_id FROM assignments WHERE study_id = ? ORDER BY rater_id",
            [study_id],
        ).fetchall()
        return [r[0] for r in rows]

    def set_status(
        self, study_id: str, rater_id: str, video_ids: Iterable[str], status: str
    ) -> None:
        """Mark assignments exported (bundle written) or returned (work imported)."""
        with write(self._db):
            for video_id in video_ids:
                self._db.execute(
                    "UPDATE assignments SET status = ?, updated_at = ? "
                    "WHERE study_id = ? AND rater_id = ? AND video_id = ? AND status != ?",
                    [status, now(), study_id, rater_id, video_id, status],
                )

    def status(self, study_id: str) -> dict[str, dict[str, Any]]:
        """Per assigned rater: counts by assignment status and the calibration state."""
        self.study(study_id)
        out: dict[str, dict[str, Any]] = {}
        for rater_id in self.assigned_raters(study_id):
            counts: dict[str, Any] = {"assigned": 0, "exported": 0, "returned": 0}
            for a in self.assignments(study_id, rater_id):
                counts[a.status] = counts.get(a.status, 0) + 1
            counts["calibration"] = self.calibration_state(study_id, rater_id)
            out[rater_id] = counts
        return out

    # ---- helpers ------------------------------------------------------------------------
    def _rated(self, study: Study, video_id: str) -> bool:
        """Whether raters see the video (under the "max" rule, Human (+) is not rated)."""
        if study.human_success_rule == "rated":
            return True
        role = self._db.execute("SELECT role FROM videos WHERE id = ?", [video_id]).fetchone()[0]
        return bool(role != Role.HUMAN_SUCCESS.value)

    def _require_unassigned(self, study_id: str, what: str) -> None:
        n = self._db.execute(
            "SELECT COUNT(*) FROM assignments WHERE study_id = ?", [study_id]
        ).fetchone()[0]
        if n:
            raise StudyError(
                f"study {study_id!r} already has {n} assignment(s); {what} can no longer change "
                "(create a new study instead)"
            )


def _study(row: Sequence[Any]) -> Study:
    """A ``studies`` row (id, name, config, created_at) as a record."""
    config: dict[str, Any] = json.loads(row[2] or "{}")
    return Study(
        id=row[0],
        name=row[1],
        raters_per_video=int(config.get("raters_per_video", 3)),
        seed=int(config.get("seed", 0)),
        human_success_rule=config.get("human_success_rule", "rated"),
        created_at=row[3],
    )
