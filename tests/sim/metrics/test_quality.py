"""Interaction quality (IVG spec §4.3): both test tables, the rubric as data, bad verdicts."""

from __future__ import annotations

import pytest

from sim.metrics import (
    CATEGORIES,
    ITEM_IDS,
    RUBRIC,
    JudgeVerdicts,
    MetricsError,
    Round,
    category_passes,
    gate,
    judge_score,
    quality_categories,
    quality_overall,
    round_categories,
    round_score,
)

#             T1 T2 S1 S2 H1 H2 H3 L1 L2 E1
J1 = JudgeVerdicts.from_row("J1", "P P P NA P F NA NA NA P")
J2 = JudgeVerdicts.from_row("J2", "F P P NA P P NA NA NA P")
ALL_NA = JudgeVerdicts("J2", {})
ALL_PASS = JudgeVerdicts.from_row("J1", "P P P P P P P P P P")


@pytest.mark.parametrize(
    ("judge", "passes", "g", "q"),
    [
        (J1, {"FG": 1, "SR": 1, "AG": 0, "GC": 1}, 1, 0.75),
        (J2, {"FG": 0, "SR": 1, "AG": 1, "GC": 1}, 0, 0.0),
    ],
)
def test_the_spec_judge_rows(
    judge: JudgeVerdicts, passes: dict[str, int], g: int, q: float
) -> None:
    assert category_passes(judge) == passes  # UI omitted: all its items NA
    assert gate(judge) == g
    assert judge_score(judge) == q


def test_the_spec_round_row_and_its_category_scores() -> None:
    round_ = Round("ep", (J1, J2))
    assert round_score(round_) == pytest.approx(0.375)
    assert round_categories(round_) == {"FG": 0.5, "SR": 1.0, "AG": 0.5, "GC": 1.0}


def row(text: str, judge: str = "J1") -> JudgeVerdicts:
    return JudgeVerdicts.from_row(judge, text)


@pytest.mark.parametrize(
    ("judges", "expected"),
    [
        pytest.param((row("NA NA P P P P P P P P"),), 1.0, id="T1, T2 NA: g = 1, FG omitted"),
        pytest.param((ALL_PASS, ALL_NA), 1.0, id="every item NA for J2: J_r = {J1}"),
        pytest.param((JudgeVerdicts("J1", {}), ALL_NA), None, id="every item NA: round dropped"),
        pytest.param((row("P P P P P P F P P P"),), 0.8, id="H3 fails: AG = 0, 4/5"),
        pytest.param((row("P P P P P P P F P P"),), 0.8, id="repeats claim: L1 fails, UI = 0"),
        pytest.param((row("P P P P P P P P F P"),), 0.8, id="overrides plan change: L2 fails"),
        pytest.param((row("P P P P P P P P P P"),), 1.0, id="override with task-critical reason"),
    ],
)  # fmt: skip
def test_the_spec_edge_cases(judges: tuple[JudgeVerdicts, ...], expected: float | None) -> None:
    assert round_score(Round("ep", judges)) == expected


def test_no_claims_means_no_factual_category() -> None:
    assert "FG" not in category_passes(row("NA NA P P P P P P P P"))


def test_the_overall_pools_rounds_and_drops_unscored_ones() -> None:
    rounds = [
        Round("a", (J1, J2), "r1"),
        Round("a", (ALL_PASS,), "r2"),
        Round("b", (JudgeVerdicts("J1", {}),), "r3"),  # dropped
        Round("b", (row("F P P P P P P P P P"),), "r4"),  # gated to 0
    ]
    overall = quality_overall(rounds)
    assert overall.value == pytest.approx((0.375 + 1.0 + 0.0) / 3)
    assert (overall.n, overall.episodes) == (3, ("a", "b"))
    cats = quality_categories(rounds)
    assert cats["FG"].value == pytest.approx((0.5 + 1 + 0) / 3)
    assert cats["SR"].value == 1.0  # no gate on category scores
    assert cats["UI"].value == pytest.approx(1.0) and cats["UI"].n == 2


def test_the_rubric_is_data_a_prompt_can_be_built_from() -> None:
    assert ITEM_IDS == ("T1", "T2", "S1", "S2", "H1", "H2", "H3", "L1", "L2", "E1")
    assert {i.category for i in RUBRIC} == set(CATEGORIES)
    assert [i.item_id for i in RUBRIC if i.category == "AG"] == ["H1", "H2", "H3"]
    assert all(i.passes_when for i in RUBRIC)


def test_verdict_spellings_are_normalised() -> None:
    assert JudgeVerdicts("J", {"T1": "pass", "E1": "n/a", "S1": "Fail"}).items == {
        "T1": "P", "E1": "NA", "S1": "F",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: JudgeVerdicts("J1", {"X9": "P"}), "X9"),
        (lambda: JudgeVerdicts("J1", {"T1": "maybe"}), "T1"),
        (lambda: JudgeVerdicts.from_row("J1", "P P P"), "10 cells"),
        (lambda: Round("ep", (J1, J1)), "judge repeats"),
    ],
)
def test_bad_verdicts_name_the_item(make: object, field: str) -> None:
    with pytest.raises(MetricsError, match=field):
        make()  # type: ignore[operator]
