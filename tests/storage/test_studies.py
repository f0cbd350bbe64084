"""Studies: the case-level panel builder, blind assignment, calibration (spec §5.1, §9.16–19).

``make_study_cases`` and ``annotate`` are shared with the bundle and CLI tests.
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from annotation import Answer
from storage import Project, StudyError, import_cases
from tests.casefactory import write_image, write_video

DOMAINS = ("kitchen_food_prep", "household_org_storage", "office_study_workspace")
MODELS = ("sora-turbo-x", "veo3-leaky")
SEEDS = (48611, 73091)
CALIBRATION_CASE = "calib_secretcase"


def make_study_cases(root: Path, per_domain: int = 2) -> Path:
    """Cases in three domains, each with a Human (+), a Human (−) and two generated videos
    whose file names follow ``<model>__<case>__seed_<n>``; plus one calibration case."""
    specs = [(f"{d[:5]}_secretcase_{j}", d) for d in DOMAINS for j in range(per_domain)]
    for case_id, domain in [*specs, (CALIBRATION_CASE, "others")]:
        folder = root / case_id
        write_image(folder / "scene_secret_initial.png")
        videos = [
            {"file": f"videos/{case_id}_human_plus.mp4", "role": "human-success"},
            {"file": f"videos/{case_id}_human_minus.mp4", "role": "human-failure"},
        ] + [
            {"file": f"videos/{m}__{case_id}__seed_{s}.mp4", "role": "generated", "model": m,
             "seed": s}
            for m, s in zip(MODELS, SEEDS, strict=True)
        ]  # fmt: skip
        for v in videos:
            write_video(folder / v["file"], n=8, seed=zlib.crc32(v["file"].encode()))
        case = {
            "format": "rollout-workbench/case@1", "id": case_id, "domain": domain,
            "goal": f"Put the red block on the plate ({case_id[-1]}).", "clutter": "minimal",
            "initial_image": "scene_secret_initial.png", "videos": videos,
        }  # fmt: skip
        (folder / "case.json").write_text(json.dumps(case))
    return root


def annotate(
    p: Project, rater: str, video_id: str, task: Sequence[int], physics: Sequence[int | str]
) -> None:
    """Plan (if none yet) one subgoal per level, and answer gates to reach those levels."""
    ann = p.annotations
    case_id = p.video(video_id).case_id
    plan = ann.plan(case_id, rater)
    while len(plan) < len(task):
        ann.add_subgoal(
            case_id, rater, source=f"block {len(plan) + 1}", action="place on", target="plate"
        )
        plan = ann.plan(case_id, rater)
    for sg, t, ph in zip(plan, task, physics, strict=False):
        for k, gate in enumerate(("T1", "T2", "T3")):
            if k <= t:
                ann.set_answer(video_id, rater, sg.id, gate, Answer.PASS if k < t else Answer.FAIL)
        if t == 0:
            continue
        if ph == "NA":
            ann.set_answer(video_id, rater, sg.id, "P1", Answer.NA)
            continue
        for k, gate in enumerate(("P1", "P2", "P3", "P4")):
            if k <= int(ph):
                ann.set_answer(
                    video_id, rater, sg.id, gate, Answer.PASS if k < int(ph) else Answer.FAIL
                )


@pytest.fixture(scope="session")
def study_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_study_cases(tmp_path_factory.mktemp("study_cases"))


@pytest.fixture
def lead(tmp_path: Path, study_cases: Path) -> Iterator[Project]:
    with Project.create(tmp_path / "lead") as p:
        import_cases(p, study_cases)
        for r in ("ann", "bob", "cy"):
            p.studies.add_rater(r, r.title())
        yield p


def test_panel_is_stratified_and_brings_every_video_of_a_case(lead: Project) -> None:
    st = lead.studies
    st.create("pilot")
    sel = st.build_panel("pilot", per_domain=1, seed=4, domains=list(DOMAINS))
    assert {d: len(c) for d, c in sel.cases.items()} == dict.fromkeys(DOMAINS, 1)
    panel = st.panel("pilot")
    for case_id in {v.case_id for v in panel}:
        assert {v.video_id for v in panel if v.case_id == case_id} == {
            v.id for v in lead.videos(case_id)
        }
    assert sel.videos_added == len(panel) == 3 * 4
    # deterministic per seed; another seed (usually) draws other cases
    st.create("again")
    assert st.build_panel("again", per_domain=1, seed=4, domains=list(DOMAINS)).cases == sel.cases
    # asking for more than a domain has is reported, not an error
    st.create("big")
    big = st.build_panel("big", per_domain=3, seed=1)
    assert big.short["kitchen_food_prep"] == 1 and big.short["personal_care_utilities"] == 3
    with pytest.raises(StudyError, match="unknown domain"):
        st.build_panel("big", per_domain=1, seed=1, domains=["garage"])


def test_assignment_is_balanced_blind_ordered_and_deterministic(lead: Project) -> None:
    st = lead.studies
    st.create("pilot", raters_per_video=2)
    st.build_panel("pilot", per_domain=2, seed=1, domains=list(DOMAINS))
    load = st.assign("pilot", ["ann", "bob", "cy"], seed=11)
    panel = [v.video_id for v in st.panel("pilot")]
    per_video = Counter(a.video_id for r in load for a in st.assignments("pilot", r))
    assert set(per_video) == set(panel) and set(per_video.values()) == {2}  # k = 2 each
    assert max(load.values()) - min(load.values()) <= 1  # balanced
    orders = {r: [a.video_id for a in st.assignments("pilot", r)] for r in load}
    for r, order in orders.items():
        assert [a.position for a in st.assignments("pilot", r)] == list(range(1, len(order) + 1))
        assert order != sorted(order)  # shuffled, not by id
    # same seed, same everything (in a second study over the same cases)
    st.create("twin", raters_per_video=2)
    st.add_cases("twin", sorted({v.case_id for v in st.panel("pilot")}))
    st.assign("twin", ["ann", "bob", "cy"], seed=11)
    assert {r: [a.video_id for a in st.assignments("twin", r)] for r in load} == orders
    # k = 3 with three raters: everyone gets every video, each in a different order
    st.create("all", raters_per_video=3)
    st.add_cases("all", sorted({v.case_id for v in st.panel("pilot")}))
    st.assign("all", ["ann", "bob", "cy"], seed=2)
    full = [[a.video_id for a in st.assignments("all", r)] for r in ("ann", "bob", "cy")]
    assert all(sorted(o) == sorted(panel) for o in full)
    assert len({tuple(o) for o in full}) == 3
    with pytest.raises(StudyError, match="already has"):
        st.assign("pilot", ["ann"], seed=1)
    with pytest.raises(StudyError, match="can no longer change"):
        st.add_cases("pilot", [CALIBRATION_CASE])


def test_human_success_rule_max_keeps_human_plus_videos_from_raters(lead: Project) -> None:
    st = lead.studies
    st.create("maxrule", raters_per_video=1, human_success_rule="max")
    st.build_panel("maxrule", per_domain=1, seed=1, domains=list(DOMAINS))
    st.assign("maxrule", ["ann"], seed=1)
    roles = {lead.video(a.video_id).role.value for a in st.assignments("maxrule", "ann")}
    assert roles == {"human-failure", "generated"}


def _calibration(p: Project) -> dict[str, dict[str, object]]:
    vids = [v.id for v in p.videos(CALIBRATION_CASE)]
    return {
        vids[0]: {"task": [3, 3], "physics": [4, 2], "notes": "a clean control"},
        vids[1]: {"gates": [{"T1": "pass", "T2": "pass", "T3": "pass", "P1": "na"},
                            {"T1": "fail"}], "notes": "S2 never starts", "holistic_task": 2},
    }  # fmt: skip


def test_calibration_compares_with_reference_and_gates_production(lead: Project) -> None:
    st = lead.studies
    st.create("pilot", raters_per_video=1)
    st.set_calibration("pilot", _calibration(lead))
    st.build_panel("pilot", per_domain=1, seed=1, domains=list(DOMAINS))
    st.assign("pilot", ["ann"], seed=3)
    calib = st.assignments("pilot", "ann")
    assert [a.calibration for a in calib][:2] == [True, True] and not calib[2].calibration
    assert st.calibration_state("pilot", "ann") == "pending"
    assert not st.production_unlocked("pilot", "ann")
    v0, v1 = list(_calibration(lead))
    annotate(lead, "ann", v0, [3, 3], [4, 4])  # P100 100 vs 75: one level, within tolerance
    report = st.calibration_report("pilot", "ann")
    items = {i.video_id: i for i in report.items}
    assert items[v0].passed and "S2: Physics 4 vs reference 2" in items[v0].differences
    assert not report.passed and "unfinished: 0 of 2" in " ".join(items[v1].differences)
    annotate(lead, "ann", v1, [0, 0], [0, 0])  # the plan is the case's: same 2 subgoals
    item = {i.video_id: i for i in st.calibration_report("pilot", "ann").items}[v1]
    assert (item.reference_t100, item.rater_t100) == (50, 0) and item.complete
    assert item.reference_p100 is None and item.rater_p100 is None  # both undefined: agree
    assert not item.passed and item.notes == "S2 never starts"
    for expected in (
        "T100 0.0 vs reference 50.0",
        "S1: Task level 0 vs reference 3",
        "S1 T1: fail vs reference pass",
        "holistic Task not given vs reference 2",
    ):
        assert any(expected in d for d in item.differences), (expected, item.differences)
    result = st.complete_calibration("pilot", "ann")
    assert not result.passed and st.calibration_state("pilot", "ann") == "failed"
    with pytest.raises(StudyError, match="fixed"):
        st.set_calibration("pilot", {})
    result = st.complete_calibration("pilot", "ann", override_reason="discussed in the meeting")
    assert result.passed and st.production_unlocked("pilot", "ann")
    assert st.calibration_state("pilot", "ann") == "passed (override)"


def test_calibration_pass_within_tolerance_and_bad_references(lead: Project) -> None:
    st = lead.studies
    st.create("pilot", raters_per_video=1)
    refs = _calibration(lead)
    v0, v1 = list(refs)
    st.set_calibration("pilot", {v0: refs[v0]})
    annotate(lead, "bob", v0, [3, 2], [4, 3])  # T100 83.3 vs 100, P100 87.5 vs 75
    report = st.calibration_report("pilot", "bob")
    assert report.passed, report.summary()
    assert st.complete_calibration("pilot", "bob").passed
    assert st.calibration_state("pilot", "bob") == "passed"
    for bad, msg in (
        ({"task": [3], "physics": [4, 4]}, "task levels but"),
        ({"task": [3]}, "give 'task' and 'physics'"),
        ({"gates": [{"T1": "pass"}]}, "stop before"),
        ({"gates": [{"P2": "na", "T1": "pass", "T2": "pass", "T3": "pass", "P1": "pass"}]}, "N/A"),
        ({"task": [3], "physics": [4], "colour": 1}, "colour"),
    ):
        with pytest.raises(StudyError, match=msg):
            st.set_calibration("pilot", {v1: bad})
    panel_case = st.build_panel("pilot", per_domain=1, seed=2, domains=[DOMAINS[0]])
    in_panel = lead.videos(next(iter(panel_case.cases[DOMAINS[0]])))[0].id
    with pytest.raises(StudyError, match="panel case"):
        st.set_calibration("pilot", {in_panel: refs[v0]})
    with pytest.raises(StudyError, match="calibration case"):
        st.add_cases("pilot", [CALIBRATION_CASE])
