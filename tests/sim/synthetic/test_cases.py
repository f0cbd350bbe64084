"""write_demo_cases writes case folders in the documented import layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.synthetic import DEFECT_KINDS, DEMO_CASES, demo_plan, rollout_truth, write_demo_cases

SIZE = (96, 54)
FPS = 3
DOMAINS = {
    "kitchen_food_prep",
    "household_org_storage",
    "office_study_workspace",
    "personal_care_utilities",
    "others",
}
CASE_KEYS = {
    "format",
    "id",
    "goal",
    "domain",
    "clutter",
    "initial_image",
    "object_list",
    "colors",
    "videos",
    "notes",
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("demo")
    messages: list[str] = []
    folders = write_demo_cases(out, seed=0, size=SIZE, fps=FPS, progress=messages.append)
    assert messages and all(isinstance(m, str) for m in messages)
    return folders


def _load(folder: Path) -> dict[str, Any]:
    data = json.loads((folder / "case.json").read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def test_case_files_are_valid(cases: list[Path]) -> None:
    assert [p.name for p in cases] == [c.case_id for c in DEMO_CASES]
    for folder in cases:
        case = _load(folder)
        assert set(case) == CASE_KEYS
        assert case["format"] == "rollout-workbench/case@1"
        assert case["id"] == folder.name
        assert case["domain"] in DOMAINS
        assert case["clutter"] in {"none", "minimal", "heavy"}
        assert case["goal"].endswith(".")
        assert case["object_list"] and case["colors"]
        roles = [v["role"] for v in case["videos"]]
        assert 5 <= len(roles) <= 6
        assert 2 <= roles.count("generated") <= 3
        assert 1 <= roles.count("human-success") <= 2
        assert roles.count("human-failure") == 1
        for v in case["videos"]:
            assert (folder / v["file"]).is_file()
            if v["role"] == "generated":
                assert set(v) == {"file", "role", "model", "seed", "demo_truth"}
                assert v["seed"] in (101, 202, 303)
                assert v["file"] == f"videos/{v['model']}__{case['id']}__seed_{v['seed']}.mp4"
            else:
                assert set(v) == {"file", "role", "demo_truth"}
            truth = v["demo_truth"]
            assert set(truth) == {"defects", "subgoals_completed"}
            for d in truth["defects"]:
                assert set(d) == {"kind", "subgoal", "start_s", "end_s"}
                assert d["kind"] in DEFECT_KINDS and d["start_s"] < d["end_s"]
        truths = [v["demo_truth"] for v in case["videos"]]
        # One clean generated video, clean human successes, a failing human recording.
        gen = [t for v, t in zip(case["videos"], truths, strict=True) if v["role"] == "generated"]
        assert any(not t["defects"] for t in gen) and any(t["defects"] for t in gen)
        for v, t in zip(case["videos"], truths, strict=True):
            if v["role"] == "human-success":
                assert t["defects"] == []
            if v["role"] == "human-failure":
                assert {d["kind"] for d in t["defects"]} <= {"unfinished", "wrong_target"}
                assert t["defects"]


def test_every_defect_kind_appears_in_the_demo(cases: list[Path]) -> None:
    kinds = {
        d["kind"] for f in cases for v in _load(f)["videos"] for d in v["demo_truth"]["defects"]
    }
    assert kinds == set(DEFECT_KINDS)


def test_initial_image_is_512_on_the_longest_side(cases: list[Path]) -> None:
    import cv2

    for folder in cases:
        img = cv2.imread(str(folder / _load(folder)["initial_image"]))
        assert img is not None
        assert max(img.shape[:2]) == 512
        assert img.shape[1] / img.shape[0] == pytest.approx(SIZE[0] / SIZE[1], rel=0.01)


def test_videos_decode_to_the_expected_frame_count(cases: list[Path]) -> None:
    import av

    for spec, folder in zip(DEMO_CASES, cases, strict=True):
        for i, v in enumerate(_load(folder)["videos"]):
            plan, seed = demo_plan(spec, i)
            truth = rollout_truth(plan, fps=FPS, seed=seed)
            assert truth.to_json() == v["demo_truth"]
            assert 6.0 <= truth.duration_s <= 12.0
            with av.open(str(folder / v["file"])) as c:
                stream = c.streams.video[0]
                assert (stream.width, stream.height) == SIZE
                assert stream.codec_context.pix_fmt == "yuv420p"
                n = sum(1 for _ in c.decode(video=0))
            assert n == truth.frame_count
