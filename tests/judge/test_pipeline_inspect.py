"""inspect_video: frames come back with new ids, context retention, per-gate limit, spend cap."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge import JudgeConfig, ScriptedModel, judge_video, scripted_judge
from judge.models import Message, SeenCall, SpendCapReached, Tool, Usage
from judge.video import JudgeResult
from storage import RunCall
from storage.media import VideoIndex, index_video
from tests.casefactory import write_video

F1 = np.full((48, 64, 3), 90, np.uint8)
GOAL = "Put the red block on the tray."


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, VideoIndex]:
    path = write_video(tmp_path_factory.mktemp("v") / "clip.mp4", n=36)  # 3.0 s at 12 fps
    return path, index_video(path)


def image_ids(call: SeenCall) -> list[str]:
    return [i.evidence_id for m in call.messages for i in m.images]


def gate_calls(api: ScriptedModel, gate: str) -> list[SeenCall]:
    return [c for c in api.seen if c.stage == f"gate:{gate}"]


def tools_of(call: SeenCall) -> list[str]:
    return [t.name for t in call.tools]


def run(clip: tuple[Path, VideoIndex], api: ScriptedModel, **config: Any) -> JudgeResult:
    return judge_video(api, *clip, GOAL, F1, config=JudgeConfig().with_overrides(config))


def test_inspection_frames_get_new_ids_and_are_shown_next(clip: tuple[Path, VideoIndex]) -> None:
    look = {"start_s": 1.0, "end_s": 2.0, "question": "Does the block lift before contact?",
            "expected_evidence": "fingers on the block first", "n_frames": 6,
            "roi": {"x": 0.25, "y": 0.25, "w": 0.5, "h": 0.5}}  # fmt: skip
    judge = scripted_judge(task_subgoals=1, physics_windows=1, inspections={"P2": 1},
                           inspect_args=look)  # fmt: skip
    api = ScriptedModel(judge)
    r = run(clip, api)
    first, second = gate_calls(api, "P2")
    assert tools_of(first) == ["submit_gate", "inspect_video"]
    new = [f"I1-{k:02d}" for k in range(1, 7)]
    assert not set(new) & set(image_ids(first))
    assert image_ids(second)[-6:] == new
    inspection = second.messages[-2].text
    assert (
        "Does the block lift before contact?" in inspection
        and '"asked_at_gate": "P2"' in inspection
    )
    (rec,) = r.inspections
    assert (rec.seq, rec.axis, rec.gate, rec.start_s, rec.end_s) == (1, "physics", "P2", 1.0, 2.0)
    assert rec.roi == (0.25, 0.25, 0.5, 0.5) and rec.evidence_ids == tuple(new)
    frames = {f.evidence_id: f for f in r.frames}
    assert [frames[i].frame_index for i in new] == [13, 15, 17, 19, 21, 23]
    assert all(frames[i].roi == rec.roi and frames[i].origin == "inspect:1" for i in new)
    gate = next(g for g in r.gates if g.gate == "P2")
    assert gate.inspections == (1,)
    assert r.frames_sent == 8 + 24 + 6


def test_context_keeps_initial_frames_and_the_latest_24_inspection_frames(
    clip: tuple[Path, VideoIndex],
) -> None:
    api = ScriptedModel(scripted_judge(inspections={"T1": 3, "T2": 1}))
    run(clip, api)
    t1 = gate_calls(api, "T1")
    assert len(t1) == 4
    submit = image_ids(t1[-1])
    initial = [f"T{k:02d}" for k in range(1, 9)]
    assert submit[:9] == ["F1", *initial]
    kept = submit[9:]
    assert len(kept) == 24 and kept[0] == "I2-01" and kept[-1] == "I3-12"
    assert not any(i.startswith("I1-") for i in submit)
    # Across gates: T2 starts from the same 24, then its own inspection pushes out I2.
    t2 = gate_calls(api, "T2")
    assert image_ids(t2[0])[9:] == kept
    assert image_ids(t2[1])[9:] == [f"I3-{k:02d}" for k in range(1, 13)] + [
        f"I4-{k:02d}" for k in range(1, 13)
    ]
    # The physics axis starts over from its own initial frames.
    p1 = gate_calls(api, "P1")[0]
    assert image_ids(p1) == ["F1"] + [f"P{k:02d}" for k in range(1, 25)]


def test_per_gate_limit_then_submit_only(clip: tuple[Path, VideoIndex]) -> None:
    api = ScriptedModel(scripted_judge(inspections={"T1": 9, "T2": 1}))
    r = run(clip, api, max_inspections_per_gate=2)
    t1 = gate_calls(api, "T1")
    assert [tools_of(c) for c in t1] == [["submit_gate", "inspect_video"]] * 2 + [["submit_gate"]]
    assert "Inspection is not available any more" in t1[-1].messages[-1].text
    gates = {g.gate: g for g in r.gates}
    assert gates["T1"].inspections == (1, 2) and "limit of 2" in gates["T1"].inspect_cut
    assert tools_of(gate_calls(api, "T2")[0]) == ["submit_gate", "inspect_video"]  # reset
    assert gates["T2"].inspections == (3,) and gates["T2"].inspect_cut == ""
    # Tool exhaustion never turns into NA or a pass: the scripted answers are what count.
    assert r.scores["sequential"].score.t100 == 100.0


def test_inspection_stops_once_the_budget_share_is_spent(clip: tuple[Path, VideoIndex]) -> None:
    want = {g: 2 for g in ("T1", "T2", "T3", "P1", "P2", "P3", "P4")}
    # Costs are binary fractions so the sums are exact.
    api = ScriptedModel(scripted_judge(inspections=want), usage=Usage(100, 20, 0.125),
                        spend_cap_usd=2.0)  # fmt: skip
    r = run(clip, api, spend_cap_usd=2.0, inspect_budget_share=0.5)
    # 3 plan calls ($0.375); T1 inspects twice and submits ($0.75); T2 inspects twice ($1.00,
    # half the cap): from then on only submit_gate is offered.
    assert [len(g.inspections) for g in r.gates] == [2, 2, 0, 0, 0, 0, 0]
    assert r.gates[0].inspect_cut == ""
    assert all("50% of the spend cap spent" in g.inspect_cut for g in r.gates[1:])
    assert r.cost_usd == 1.75 and api.spent_usd <= 2.0
    assert r.scores["sequential"].score.s == 100.0


def test_cap_refusing_an_inspecting_call_asks_for_submit_only_then_fails(
    clip: tuple[Path, VideoIndex],
) -> None:
    def usage(stage: str, messages: Sequence[Message], tools: Sequence[Tool]) -> Usage:
        # Offering inspect_video costs more (its schema, and the frames it brings).
        return Usage(10, 10, 0.25 if len(tools) > 1 else 0.125)

    records: list[RunCall] = []
    api = ScriptedModel(scripted_judge(inspections={"T1": 5}), usage=usage, spend_cap_usd=1.0,
                        recorder=records.append)  # fmt: skip
    with pytest.raises(SpendCapReached) as err:
        run(clip, api, spend_cap_usd=1.0, inspect_budget_share=1.0)
    # the provider's own words: what the next call costs and what is left, not a bare total
    assert str(err.value) == (
        "spend cap reached: the next call costs $0.1250 but only $0.0000 of the $1.00 cap is "
        "left (spent $1.0000); no request was sent"
    )
    # plans 0.375 → T1 inspects (0.625, 0.875) → refused (1.125) → submit-only (1.0) → T2 refused.
    t1 = gate_calls(api, "T1")
    assert [tools_of(c) for c in t1] == [["submit_gate", "inspect_video"]] * 2 + [["submit_gate"]]
    assert [c.stage for c in api.seen][-1] == "gate:T1"
    assert api.spent_usd == 1.0
    refused = [r for r in records if not r.ok]
    assert [r.stage for r in refused] == ["gate:T1", "gate:T2"]
    assert all(r.error and r.error.startswith("spend cap reached") for r in refused)
