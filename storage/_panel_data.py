"""A project's ratings as the arrays the agreement statistics take.

Human ratings are each rater's per-video T100/P100 from their recorded gate decisions (only
complete ratings count); judge verdicts are the newest finished run per video for each
(profile, mode), one evaluator per scoring rule. Nothing here computes a statistic: this only
reads, so ``annotation`` stays free of storage.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from annotation import Evaluator, GateRecord, Panel
from storage._judge import JudgeRuns
from storage._records import Role, Video

if TYPE_CHECKING:
    from storage._project import Project


@dataclass(frozen=True, eq=False)
class ProjectPanel:
    """The panel, the judge evaluators on the same videos, and what each slot holds."""

    panel: Panel
    evaluators: tuple[Evaluator, ...]
    videos: tuple[Video, ...]
    raters: tuple[tuple[str, ...], ...]  # per video, the rater in each filled slot

    def video(self, video_id: str) -> Video:
        return next(v for v in self.videos if v.id == video_id)


def _nan(v: float | None) -> float:
    return float("nan") if v is None else float(v)


def load_panel(project: Project, *, study_id: str | None = None) -> ProjectPanel:
    """Every rated video of the project (or of a study's production panel) as a Panel.

    Raises:
        StudyError: ``study_id`` is not a study of this project (named, with the known ones).
    """
    videos = _videos(project, study_id)
    by_id = {v.id: v for v in videos}
    ann = project.annotations
    ratings: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
    for video_id, rater_id in project.db.execute(
        "SELECT video_id, rater_id FROM ratings ORDER BY rater_id"
    ).fetchall():
        video = by_id.get(video_id)
        if video is None:
            continue
        live = ann.live_score(video_id, video.case_id, rater_id)
        if live.provisional or live.n_subgoals == 0:
            continue  # half-done work is not a rating
        ratings[video_id].append((rater_id, _nan(live.score.t100), _nan(live.score.p100)))
    slots = max((len(r) for r in ratings.values()), default=1)
    task = np.full((len(videos), slots), np.nan)
    physics = np.full((len(videos), slots), np.nan)
    for i, v in enumerate(videos):
        for j, (_, t, p) in enumerate(ratings.get(v.id, [])):
            task[i, j], physics[i, j] = t, p
    domains = {c.id: c.domain.value for c in project.cases()}
    panel = Panel(
        video_ids=tuple(v.id for v in videos),
        case_ids=np.array([v.case_id for v in videos]),
        # A rater project knows no roles: its videos form one group, as generated ones do.
        models=np.array([v.model or (v.role or Role.GENERATED).value for v in videos]),
        roles=np.array([(v.role or Role.GENERATED).value for v in videos]),
        task=task,
        physics=physics,
        domains=np.array([domains[v.case_id] for v in videos]),
    )
    return ProjectPanel(
        panel=panel,
        evaluators=tuple(_evaluators(project, videos)),
        videos=tuple(videos),
        raters=tuple(tuple(r[0] for r in ratings.get(v.id, [])) for v in videos),
    )


def _videos(project: Project, study_id: str | None) -> list[Video]:
    videos = project.videos()
    if study_id is None:
        return videos
    project.studies.study(study_id)  # an unknown id is refused by name, not read as "empty"
    chosen = {sv.video_id for sv in project.studies.panel(study_id)}
    return [v for v in videos if v.id in chosen]


def _evaluators(project: Project, videos: list[Video]) -> list[Evaluator]:
    """One evaluator per (profile, mode, rule) from each video's newest finished run."""
    runs = JudgeRuns(project.db)
    scores: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    for v in videos:
        newest: dict[tuple[str, str], dict[str, object]] = {}
        for run in runs.runs(v.id):
            if run.status == "done":
                newest[(run.profile or "?", run.mode)] = run.scores  # later runs win
        for (profile, mode), blob in newest.items():
            rules = blob.get("rules")
            if not isinstance(rules, dict):
                continue
            for rule, sc in rules.items():
                # one evaluator per scoring rule; the rule is named when a run has several
                name = f"{profile} · {mode}" + (f" · {rule}" if len(rules) > 1 else "")
                triple = (_nan(sc.get("T100")), _nan(sc.get("P100")), _nan(sc.get("S")))
                scores[name][v.id] = triple
    out = []
    for name in sorted(scores):
        rows = [scores[name].get(v.id, (np.nan, np.nan, np.nan)) for v in videos]
        arr = np.array(rows, dtype=np.float64).reshape(len(videos), 3)
        out.append(Evaluator(name=name, task=arr[:, 0], physics=arr[:, 1], final=arr[:, 2]))
    return out


def load_gate_records(
    project: Project, *, study_id: str | None = None
) -> tuple[list[GateRecord], dict[str, list[float | None]], dict[str, list[float | None]]]:
    """Every rater's recorded gate answers per video, with the holistic ratings per video
    (the inputs of the rubric ablation, spec §5.5), for the project or a study's panel."""
    ann = project.annotations
    by_id = {v.id: v for v in _videos(project, study_id)}
    records: list[GateRecord] = []
    task: dict[str, list[float | None]] = defaultdict(list)
    physics: dict[str, list[float | None]] = defaultdict(list)
    for video_id, rater_id in project.db.execute(
        "SELECT video_id, rater_id FROM ratings ORDER BY video_id, rater_id"
    ).fetchall():
        video = by_id.get(video_id)
        if video is None:
            continue
        answers = ann.answers(video_id, rater_id)
        plan = ann.plan(video.case_id, rater_id)
        if plan:
            subgoals = tuple({g: a.value for g, a in answers.get(s.id, {}).items()} for s in plan)
            records.append(GateRecord(video_id, rater_id, subgoals))
        rating = ann.rating(video_id, rater_id)
        if rating is not None and rating.holistic_task is not None:
            task[video_id].append(rating.holistic_task)
            physics[video_id].append(rating.holistic_physics)
    return records, dict(task), dict(physics)
