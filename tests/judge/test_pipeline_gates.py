"""The gated walk from scripted answers: early exit, NA, unresolved, scores, independent mode."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from annotation import Mark, score
from judge import JudgeCancelled, PipelineError, ScriptedModel, judge_video, scripted_judge
from judge.models import Message, Tool, ToolCall
from judge.video import JudgeConfig, JudgeResult
from judge.video._scripts import live_ids
from storage.media import VideoIndex, index_video
from tests.casefactory import write_video

F1 = np.full((48, 64, 3), 90, np.uint8)
GOAL = "Put the red block and the blue block on the tray."


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, VideoIndex]:
    path = write_video(tmp_path_factory.mktemp("v") / "clip.mp4", n=24)
    return path, index_video(path)


def run(
    clip: tuple[Path, VideoIndex],
    *,
    n: int = 2,
    answers: Any = None,
    mode: str = "gated",
    **kw: Any,
) -> tuple[JudgeResult, ScriptedModel]:
    api = ScriptedModel(scripted_judge(task_subgoals=n, physics_windows=n, answers=answers))
    return judge_video(api, *clip, GOAL, F1, mode=mode, **kw), api  # type: ignore[arg-type]


def asked(api: ScriptedModel) -> dict[str, list[str]]:
    """Gate → the subgoal ids its submit_gate call asked about."""
    return {c.stage[5:]: live_ids(c.tools) for c in api.seen if c.stage.startswith("gate:")}


def test_perfect_judge_scores_100_with_one_call_per_gate(clip: tuple[Path, VideoIndex]) -> None:
    r, api = run(clip)
    s = r.scores["sequential"].score
    assert (s.t100, s.p100, s.s, s.coverage) == (100.0, 100.0, 100.0, 1.0)
    assert [c.stage for c in api.seen] == [
        "plan_task", "plan_physics", "review",
        "gate:T1", "gate:T2", "gate:T3", "gate:P1", "gate:P2", "gate:P3", "gate:P4",
    ]  # fmt: skip
    assert r.calls == 10 and r.primary == "sequential" and set(r.scores) == {"sequential"}
    assert [g.sid for g in r.task_plan] == ["S1", "S2"] and len(r.review) == 2
    assert r.frames_sent == 8 + 24 and r.frames_decoded == 24


def test_a_subgoal_failing_t1_is_not_asked_later_gates(clip: tuple[Path, VideoIndex]) -> None:
    r, api = run(clip, answers={"T1": {"S2": "no"}, "P2": {"S1": "no"}})
    assert asked(api) == {
        "T1": ["S1", "S2"], "T2": ["S1"], "T3": ["S1"],
        "P1": ["S1", "S2"], "P2": ["S1", "S2"], "P3": ["S2"], "P4": ["S2"],
    }  # fmt: skip
    rule = r.scores["sequential"]
    assert rule.task_levels == (3, 0) and rule.physics_levels == (1, 4)


def _answers(task: list[str], physics: list[str]) -> dict[str, dict[str, str]]:
    """Per-subgoal gate strings such as "yyn" (T1 yes, T2 yes, T3 no) → scripted answers."""
    codes = {"y": "yes", "n": "no", "A": "NA", "?": "?"}
    out: dict[str, dict[str, str]] = {}
    for gates, rows in (("T1 T2 T3", task), ("P1 P2 P3 P4", physics)):
        for k, row in enumerate(rows, start=1):
            for gate, c in zip(gates.split(), row, strict=False):
                out.setdefault(gate, {})[f"S{k}"] = codes[c]
    return out


# Spec §3.3 cases, written as the answers a judge gives; the expected levels are what the
# table lists, and T/P/S must equal annotation.score of those levels.
CASES = [
    ("1 perfect", ["yyy"] * 3, ["yyyy"] * 3, (3, 3, 3), (4, 4, 4)),
    ("4", ["yn", "yyn", "yyy"], ["n", "yyyy", "yyn"], (1, 2, 3), (0, 4, 2)),
    ("6 zero physics", ["yyn", "yyn"], ["n", "n"], (2, 2), (0, 0)),
    ("5 all NA", ["yyy", "yyy"], ["A", "A"], (3, 3), (Mark.NA, Mark.NA)),
    ("15 NA excluded", ["yyn", "yyy"], ["yyyy", "A"], (2, 3), (4, Mark.NA)),
    ("12 task ?", ["yn", "y?"], ["yyyy", "yyyy"], (1, Mark.UNRESOLVED), (4, 4)),
    ("13 physics ?", ["yyy", "yyy"], ["yyn", "yy?"], (3, 3), (2, Mark.UNRESOLVED)),
    ("14 nothing", ["n", "n"], ["?", "A"], (0, 0), (Mark.UNRESOLVED, Mark.NA)),
]


@pytest.mark.parametrize(("name", "task", "physics", "t_levels", "p_levels"), CASES)
def test_spec_cases_score_like_annotation(
    clip: tuple[Path, VideoIndex],
    name: str,
    task: list[str],
    physics: list[str],
    t_levels: tuple[Any, ...],
    p_levels: tuple[Any, ...],
) -> None:
    r, _ = run(clip, n=len(task), answers=_answers(task, physics))
    rule = r.scores["sequential"]
    assert rule.task_levels == t_levels and rule.physics_levels == p_levels
    want = score(list(t_levels), list(p_levels))
    got = rule.score
    assert (got.t100, got.p100, got.s, got.coverage) == pytest.approx(
        (want.t100, want.p100, want.s, want.coverage), nan_ok=True
    ), name


def test_unresolved_withholds_the_axis_and_stops_asking_it(clip: tuple[Path, VideoIndex]) -> None:
    r, api = run(clip, answers={"T1": {"S1": "?"}})
    assert "T2" not in asked(api) and "T3" not in asked(api)
    assert "P4" in asked(api)  # the other axis goes on
    s = r.scores["sequential"].score
    assert s.t100 is None and s.s is None and s.p100 == 100.0


def test_na_outside_p1_is_recorded_as_unresolved_and_noted(clip: tuple[Path, VideoIndex]) -> None:
    r, api = run(clip, answers={"P2": {"S2": "NA"}})
    row = next(x for g in r.gates if g.gate == "P2" for x in g.rows if x.sid == "S2")
    assert row.answer == "NA" and row.unresolved and "only at P1" in row.note
    assert r.scores["sequential"].score.p100 is None
    assert "P3" not in asked(api)


def test_na_at_p1_excludes_the_window(clip: tuple[Path, VideoIndex]) -> None:
    r, api = run(clip, answers={"P1": {"S1": "NA"}})
    assert asked(api)["P2"] == ["S2"]
    assert r.scores["sequential"].score.coverage == 0.5


def test_independent_mode_asks_everything_and_scores_both_rules(
    clip: tuple[Path, VideoIndex],
) -> None:
    # Spec cases 20/21: T1 no, T2 yes, T3 yes → 0 vs 2; P1 yes, P2 no, P3 yes, P4 yes → 1 vs 3.
    answers = _answers(["nyy", "yyy"], ["ynyy", "A"])
    r, api = run(clip, answers=answers, mode="independent")
    # Everything is asked again after a "no"; only S2, NA at P1, stays out (under both rules).
    assert asked(api) == {
        "T1": ["S1", "S2"], "T2": ["S1", "S2"], "T3": ["S1", "S2"],
        "P1": ["S1", "S2"], "P2": ["S1"], "P3": ["S1"], "P4": ["S1"],
    }  # fmt: skip
    seq, ind = r.scores["sequential"], r.scores["independent"]
    assert seq.task_levels == (0, 3) and ind.task_levels == (2, 3)
    assert seq.physics_levels == (1, Mark.NA) and ind.physics_levels == (3, Mark.NA)
    assert seq.score.t100 == pytest.approx(50.0) and ind.score.t100 == pytest.approx(250 / 3)
    assert r.primary == "sequential"


def test_unknown_evidence_ids_are_kept_and_flagged(clip: tuple[Path, VideoIndex]) -> None:
    base = scripted_judge()

    def respond(stage: str, messages: Any, tools: Any) -> ToolCall:
        call = base(stage, messages, tools)
        if stage == "gate:T1":
            rows = [
                dict(r) | {"evidence_ids": ["T02", "P07", "X9"]} for r in call.arguments["rows"]
            ]
            return ToolCall(call.name, {"gate": "T1", "rows": rows})
        return call

    r = judge_video(ScriptedModel(respond), *clip, GOAL, F1)
    row = r.gates[0].rows[0]
    assert row.evidence_ids == ("T02", "P07", "X9")
    assert "not shown to the model: P07, X9" in row.note


def _flaky(bad: Mapping[str, Any], stage: str, times: int) -> Any:
    """The scripted judge, except that ``stage`` first answers ``bad`` ``times`` times."""
    base = scripted_judge()
    left = [times]

    def respond(st: str, messages: list[Message], tools: list[Tool]) -> ToolCall:
        if st == stage and left[0] > 0:
            left[0] -= 1
            return ToolCall(base(st, messages, tools).name, bad)
        return base(st, messages, tools)

    return respond


def test_a_reply_breaking_a_rule_is_asked_again_then_fails(clip: tuple[Path, VideoIndex]) -> None:
    item = {"source": "a", "target": None, "action": "b", "end_state": "c", "reason": "d"}
    s1, s2 = item | {"id": "S1", "requires": ["S2"]}, item | {"id": "S2", "requires": []}
    forward = {"subgoals": [s1, s2]}
    api = ScriptedModel(_flaky(forward, "plan_task", 1))
    r = judge_video(api, *clip, GOAL, F1)
    assert [c.stage for c in api.seen][:2] == ["plan_task", "plan_task"]
    retry = api.seen[1].messages
    assert retry[-2].role == "assistant" and "requires may name only earlier ids" in retry[-1].text
    assert any("plan_task: reply rejected" in n for n in r.notes)
    gaps = {"subgoals": [item | {"id": "S1", "requires": []}, item | {"id": "S3", "requires": []}]}
    with pytest.raises(PipelineError, match="S1, S2 in this order"):
        judge_video(ScriptedModel(_flaky(gaps, "plan_task", 5)), *clip, GOAL, F1)
    dup = {"gate": "T1", "rows": [
        {"id": "S1", "answer": "yes", "unresolved": False, "evidence_ids": [], "timestamps_s": [],
         "note": ""}] * 2}  # fmt: skip
    with pytest.raises(PipelineError, match="one row for each of S1, S2"):
        judge_video(ScriptedModel(_flaky(dup, "gate:T1", 5)), *clip, GOAL, F1)


def test_cancel_is_checked_before_every_call_and_progress_reaches_one(
    clip: tuple[Path, VideoIndex],
) -> None:
    api = ScriptedModel(scripted_judge())
    with pytest.raises(JudgeCancelled):
        judge_video(api, *clip, GOAL, F1, should_stop=lambda: len(api.seen) >= 4)
    assert len(api.seen) == 4
    seen: list[tuple[float, str]] = []
    judge_video(ScriptedModel(scripted_judge()), *clip, GOAL, F1,
                progress=lambda f, note: seen.append((f, note)))  # fmt: skip
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("gate P4" in note for _, note in seen)


def test_bad_input_fails_before_any_call(clip: tuple[Path, VideoIndex]) -> None:
    api = ScriptedModel(scripted_judge())
    with pytest.raises(PipelineError, match="empty goal"):
        judge_video(api, *clip, "  ", F1)
    with pytest.raises(PipelineError, match="unknown judge mode"):
        judge_video(api, *clip, GOAL, F1, mode="holistic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown judge setting"):
        JudgeConfig().with_overrides({"max_inspections": 3})
    assert JudgeConfig().with_overrides({"spend_cap_usd": 1}).spend_cap_usd == 1.0
    assert api.seen == []
