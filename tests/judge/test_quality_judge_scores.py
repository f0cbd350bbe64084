"""Scores from stored verdicts alone reproduce the spec's tables (IVG §4.3), with no call."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import cast

import pytest

from judge import QUALITY_PROMPT_VERSION, quality_scores, stored_verdicts
from sim.metrics import ITEM_IDS
from storage import (
    EpisodeNotFoundError,
    Project,
    QualityVerdictRecord,
    QualityVerdicts,
    VerdictCode,
)

J1, J2 = "judge-1", "judge-2"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with Project.create(tmp_path / "p") as p:
        yield p


def _episode(p: Project) -> str:
    return p.episodes.create(
        scenario="burger", scenario_sha="s", family="kitchen", mode="symbolic", agent="rule",
        seed=1, delta=0.1, contract_json="{}", contract_hash="h", config={"interactive": True},
    )  # fmt: skip


def store(p: Project, eid: str, rounds: Mapping[int, Mapping[str, str]], **kw: str) -> None:
    """Verdict rows (rubric order, ``P``/``F``/``NA``) per round and judge, as a job writes."""
    version = kw.get("version", QUALITY_PROMPT_VERSION)
    QualityVerdicts(p.db).add(
        QualityVerdictRecord(eid, judge, version, r, 2 * r, item, cast(VerdictCode, v), "why")
        for r, judges in rounds.items()
        for judge, row in judges.items()
        for item, v in zip(ITEM_IDS, row.split(), strict=True)
    )


NA = "NA NA NA NA NA NA NA NA NA NA"


def test_the_spec_test_table(project: Project) -> None:
    """One round, two judges: J1 0.75, J2 gated to 0, Q_r 0.375; categories ungated."""
    eid = _episode(project)
    store(project, eid, {0: {J1: "P P P NA P F NA NA NA P", J2: "F P P NA P P NA NA NA P"}})
    s = quality_scores(project, eid)
    assert s.overall.value == pytest.approx(0.375) and s.overall.n == 1
    cats = {c: v.value for c, v in s.categories.items()}
    assert cats == {"FG": 0.5, "SR": 1.0, "AG": 0.5, "UI": None, "GC": 1.0}
    assert s.judges == (J1, J2) and s.overall.episodes == (eid,)


@pytest.mark.parametrize(
    ("j1", "j2", "overall", "categories"),
    [
        # T1 and T2 both NA (no factual claims): g = 1, FG omitted from C
        ("NA NA P NA P P NA NA NA P", "NA NA P NA P P NA NA NA P", 1.0,
         {"FG": None, "SR": 1.0, "AG": 1.0, "UI": None, "GC": 1.0}),
        # every item NA for J2; J1 gives 1.0: J_r = {J1}, Q_r = 1.0
        ("P P P NA P P NA NA NA P", NA, 1.0,
         {"FG": 1.0, "SR": 1.0, "AG": 1.0, "UI": None, "GC": 1.0}),
        # every item NA for both judges: the round is excluded from the overall score
        (NA, NA, None, {"FG": None, "SR": None, "AG": None, "UI": None, "GC": None}),
        # H3 fails (mistake claimed without a remedy), all else pass, all 5 categories apply
        ("P P P P P P F P P P", "P P P P P P F P P P", 0.8,
         {"FG": 1.0, "SR": 1.0, "AG": 0.0, "UI": 1.0, "GC": 1.0}),
        # the assistant repeats its claim after push-back: L1 fails, UI = 0
        ("P P P P P P NA F NA P", "P P P P P P NA F NA P", 0.8,
         {"FG": 1.0, "SR": 1.0, "AG": 1.0, "UI": 0.0, "GC": 1.0}),
        # a relevant, concise response with a factual error scores 0 overall (the gate)
        ("F P P NA P P NA NA NA P", "F P P NA P P NA NA NA P", 0.0,
         {"FG": 0.0, "SR": 1.0, "AG": 1.0, "UI": None, "GC": 1.0}),
    ],
)  # fmt: skip
def test_the_spec_edge_cases(
    project: Project, j1: str, j2: str, overall: float | None, categories: dict[str, float]
) -> None:
    eid = _episode(project)
    store(project, eid, {0: {J1: j1, J2: j2}})
    s = quality_scores(project, eid)
    assert s.overall.value == (None if overall is None else pytest.approx(overall))
    assert {c: v.value for c, v in s.categories.items()} == categories


def test_rounds_pool_across_episodes_and_only_stored_judges_count(project: Project) -> None:
    a, b = _episode(project), _episode(project)
    ok = "P P P NA P P NA NA NA P"
    store(project, a, {0: {J1: ok, J2: ok}, 1: {J1: "F P P NA P P NA NA NA P", J2: ok}})
    store(project, b, {0: {J1: "P P P NA P F NA NA NA P"}})  # J2 has not graded it yet
    store(project, b, {1: {"judge-3": "F F F F F F F F F F"}})
    store(project, b, {0: {J2: "F F F F F F F F F F"}}, version="iq-judge@0")  # another prompt
    s = quality_scores(project, [a, b[:8]], profiles=[J1, J2])
    # a: 1.0 and (0 + 1) / 2; b: J1's 0.75 alone (pooled over rounds, not episodes)
    assert s.overall.value == pytest.approx((1.0 + 0.5 + 0.75) / 3) and s.overall.n == 3
    assert [(r.episode_id, r.round_id, len(r.judges)) for r in s.rounds] == [
        (a, "0", 2), (a, "1", 2), (b, "0", 1)
    ]  # fmt: skip
    every = quality_scores(project, b)  # default: every judge of the current prompt version
    assert every.judges == (J1, "judge-3") and every.overall.value == pytest.approx(0.75 / 2)
    assert len(stored_verdicts(project, b)) == 30


def test_an_unknown_episode_is_named(project: Project) -> None:
    with pytest.raises(EpisodeNotFoundError, match="no episode"):
        quality_scores(project, "0123456789abcdef")
