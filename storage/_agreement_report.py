"""Load a project's ratings and compute what the results views show, once for the GUI and CLI.

:func:`agreement_report` is the one place that turns a project (or a study's panel) into the
agreement table, the leaderboard and the disagreement queue; :func:`rubric_ablation` does the
same for the rubric ablation. Both refuse by name what cannot be computed: an unknown study
(:class:`StudyError`) and a panel without a single rating (:class:`NoRatingsError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from annotation import (
    AblationTable,
    AgreementTable,
    DisagreementQueue,
    Evaluator,
    Leaderboard,
    UserError,
    ablation_table,
    agreement_table,
    disagreement_queue,
    leaderboard,
    panel_consensus,
)
from storage._panel_data import ProjectPanel, load_gate_records, load_panel

if TYPE_CHECKING:
    from storage._project import Project

HumanSuccess = Literal["rated", "max"]
FloatArray = npt.NDArray[np.float64]


class AgreementError(UserError, LookupError):
    """An agreement request that names something the project does not have."""


class NoRatingsError(AgreementError):
    """Nothing to compute: the project (or study) has no rating the statistic can use."""


def evaluator(data: ProjectPanel, name: str | None) -> Evaluator | None:
    """The judge evaluator called ``name`` (None: the first, or None if there is no judge).

    Raises:
        AgreementError: no evaluator of that name on these videos (the known ones are listed).
    """
    evs = {e.name: e for e in data.evaluators}
    if name is None:
        return next(iter(evs.values()), None)
    if name not in evs:
        known = ", ".join(evs) or "none: no finished judge run on these videos"
        raise AgreementError(f"no evaluator {name!r} (known: {known})")
    return evs[name]


def rated_panel(project: Project, *, study_id: str | None = None) -> ProjectPanel:
    """The project's (or a study's) rated panel.

    Raises:
        StudyError: ``study_id`` is not a study of this project.
        NoRatingsError: No video of the selection has a complete human rating.
    """
    data = load_panel(project, study_id=study_id)
    if not any(data.raters):
        raise NoRatingsError(_no_ratings(data.panel.n_videos, study_id))
    return data


def disagreements(
    data: ProjectPanel, judge: str | None = None, *, human_success: HumanSuccess = "rated"
) -> DisagreementQueue:
    """The disagreement queue against one judge (default: the first; none: humans only)."""
    ev = evaluator(data, judge)
    return disagreement_queue(data.panel, ev, human_success=human_success)


@dataclass(frozen=True, eq=False)
class AgreementReport:
    """The panel and every figure computed from it."""

    data: ProjectPanel
    consensus: dict[str, FloatArray]
    agreement: AgreementTable
    leaderboard: Leaderboard
    human_success: HumanSuccess
    study_id: str | None = None

    @property
    def n_rated(self) -> int:
        """Videos with at least one complete human rating."""
        return sum(1 for r in self.data.raters if r)

    def disagreements(self, judge: str | None = None) -> DisagreementQueue:
        """The disagreement queue against one judge (default: the first; none: humans only)."""
        return disagreements(self.data, judge, human_success=self.human_success)

    def describe(self) -> list[str]:
        """What was computed, in words: the sample, the judges, the resamples, seed and level."""
        data, table = self.data, self.agreement
        n = data.panel.n_videos
        where = "this project" if self.study_id is None else f"study {self.study_id!r}'s panel"
        judges = ", ".join(e.name for e in data.evaluators)
        first = (
            f"Agreement on {n} video{'s' if n != 1 else ''} of {where} ({self.n_rated} rated by "
            f"humans) · {'judges: ' + judges if judges else 'no judge runs'}"
        )
        cases = int(np.unique(data.panel.case_ids).size)
        how = (
            f"{100 * table.ci:g}% case-bootstrap percentile intervals from {table.n_boot:,} "
            f"resamples of {cases} case{'s' if cases != 1 else ''} (seed {table.seed})"
            if table.n_boot
            else "point estimates only (no resamples: no intervals)"
        )
        rule = "as rated" if self.human_success == "rated" else "set to the rubric maximum"
        return [first, f"{how}; Human (+) recordings {rule}"]


def agreement_report(
    project: Project,
    *,
    study_id: str | None = None,
    human_success: HumanSuccess = "rated",
    n_boot: int = 1000,
    seed: int = 0,
) -> AgreementReport:
    """Load the ratings and compute the agreement table and the leaderboard.

    Raises:
        StudyError: ``study_id`` is not a study of this project.
        NoRatingsError: No video of the selection has a complete human rating.
    """
    data = rated_panel(project, study_id=study_id)
    panel, evs = data.panel, data.evaluators
    return AgreementReport(
        data=data,
        consensus=panel_consensus(panel, human_success=human_success),
        agreement=agreement_table(
            panel, evs, human_success=human_success, n_boot=n_boot, seed=seed
        ),
        leaderboard=leaderboard(panel, evs, human_success=human_success, n_boot=n_boot, seed=seed),
        human_success=human_success,
        study_id=study_id,
    )


def rubric_ablation(project: Project, *, study_id: str | None = None) -> AblationTable:
    """The rubric ablation (spec §5.5 (A)) from the recorded gates and holistic ratings.

    Raises:
        StudyError: ``study_id`` is not a study of this project.
        NoRatingsError: No video has both recorded gate decisions and holistic ratings.
    """
    records, task, physics = load_gate_records(project, study_id=study_id)
    table = ablation_table(records, task, physics)
    if not any(r.n_records for r in table.rows):
        scope = f"study {study_id!r}" if study_id is not None else "this project"
        raise NoRatingsError(
            f"no ratings for the ablation: no video of {scope} has both a holistic rating and "
            "gate decisions every variant can score (pilot mode records every gate, spec §5.5)"
        )
    return table


def _no_ratings(n_videos: int, study_id: str | None) -> str:
    where = "this project" if study_id is None else f"study {study_id!r}'s panel"
    if n_videos == 0:
        return f"no ratings: {where} has no videos yet, so there is no agreement to compute"
    videos = f"the {n_videos} video{'s' if n_videos != 1 else ''} of {where}"
    return (
        f"no ratings: none of {videos} has a complete human rating yet (a rating counts once "
        "every gate its subgoals reach is answered), so there is no agreement to compute"
    )
