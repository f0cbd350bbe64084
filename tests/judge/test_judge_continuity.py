"""Continuity windows offered to the VLM judge: named at the Physics gates, recorded with the
run, and absent (the prompts of a run without the option, the same scores) when off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli._main import cli
from judge import (
    MAX_CONTINUITY_WINDOWS,
    JudgeConfig,
    ModelProfile,
    PipelineError,
    QueueError,
    ScriptedModel,
    judge_video,
    queue_judge,
    save_profile,
    scripted_judge,
)
from judge.models.loopback import FakeServer, body_messages
from judge.video.loopback import wire_responder
from storage import JudgeRuns, Project, Video, import_cases, run_worker
from storage._db import write
from storage.media import VideoIndex, index_video
from storage.media.continuity import Scan, Window, scan_video
from tests.casefactory import write_video
from tests.continuity_case import Truth, inspecting_judge, offered_in, write_corrupted_case

F1 = np.full((48, 64, 3), 90, np.uint8)
GOAL = "Put the red block on the tray."
INTRO = "An automatic continuity scan looked at every frame"
PROMPTS = Path(__file__).resolve().parents[2] / "resources" / "prompts"


def _w(start: float, end: float, score: float, reason: str) -> Window:
    return Window(start, end, score, reason, frame=0, peak_s=start, kind="jump")


# best first, as a scan lists them
SCAN = Scan("1-test", 36, 3.0, (_w(2.0, 2.2, 9.0, "late jump"), _w(0.5, 0.7, 6.0, "early tone"),
                                _w(1.2, 1.3, 3.5, "weak")), (), 0.0)  # fmt: skip
TOP2 = [
    {"id": "C1", "start_s": 0.5, "end_s": 0.7, "score": 6.0, "reason": "early tone"},
    {"id": "C2", "start_s": 2.0, "end_s": 2.2, "score": 9.0, "reason": "late jump"},
]


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, VideoIndex]:
    path = write_video(tmp_path_factory.mktemp("v") / "clip.mp4", n=36)  # 3.0 s at 12 fps
    return path, index_video(path)


# ---- the pipeline, with a scripted model ----------------------------------------------------
def test_strongest_windows_are_named_at_the_physics_gates_and_recorded(
    clip: tuple[Path, VideoIndex],
) -> None:
    api = ScriptedModel(scripted_judge())
    r = judge_video(api, *clip, GOAL, F1, config=JudgeConfig(continuity_windows=2),
                    continuity=SCAN)  # fmt: skip
    physics = [c for c in api.seen if c.stage.startswith("gate:P")]
    assert [c.stage for c in physics] == ["gate:P1", "gate:P2", "gate:P3", "gate:P4"]
    for call in api.seen:
        # the two strongest, in time order; only at Physics gates (the Task rubric says to
        # ignore glitches), never before the video is seen
        want = [TOP2] if call in physics else []
        assert offered_in(call.messages) == want, call.stage
        assert any(INTRO in m.text for m in call.messages) == (call in physics)
        assert all(INTRO not in m.text for m in call.messages if m.role == "system")
    assert r.config["continuity_windows"] == 2
    assert r.config["continuity"] == {"scan_version": "1-test", "scan_windows": 3,
                                      "offered": TOP2}  # fmt: skip


def test_off_sends_the_prompts_of_a_run_without_the_option_and_scores_the_same(
    clip: tuple[Path, VideoIndex],
) -> None:
    answers = {"T2": {"S2": "no"}, "P3": {"S1": "no"}}
    plain, off, on = (ScriptedModel(scripted_judge(answers=answers)) for _ in range(3))
    r_plain = judge_video(plain, *clip, GOAL, F1)
    r_off = judge_video(off, *clip, GOAL, F1, continuity=SCAN)  # a scan, but the option is 0
    r_on = judge_video(on, *clip, GOAL, F1, config=JudgeConfig(continuity_windows=3),
                       continuity=SCAN)  # fmt: skip

    def texts(api: ScriptedModel) -> list[tuple[str, list[str]]]:
        return [(c.stage, [m.text for m in c.messages]) for c in api.seen]

    assert texts(off) == texts(plain)
    assert not any(INTRO in t for _, ts in texts(off) for t in ts)
    assert r_off.config == r_plain.config and "continuity" not in r_off.config
    assert r_off.config["continuity_windows"] == 0
    assert r_off.scores == r_plain.scores == r_on.scores  # the scripted model ignores them
    assert r_plain.scores["sequential"].score.s is not None


def test_v2_templates_are_v1_plus_the_continuity_intro() -> None:
    """Off, a v2 run's prompts are exactly v1's: every v1 template is unchanged in v2."""
    v1, v2 = PROMPTS / "ego2act-judge-v1", PROMPTS / "ego2act-judge-v2"
    names = {p.name for p in v2.glob("*.md")} - {"README.md"}
    assert names - {p.name for p in v1.glob("*.md")} == {"continuity_windows.md"}
    for p in v1.glob("*.md"):
        if p.name != "README.md":
            assert (v2 / p.name).read_bytes() == p.read_bytes(), p.name


def test_the_option_needs_a_scan_gates_and_a_sane_count(clip: tuple[Path, VideoIndex]) -> None:
    api = ScriptedModel(scripted_judge())
    with pytest.raises(PipelineError, match="no continuity scan"):
        judge_video(api, *clip, GOAL, F1, config=JudgeConfig(continuity_windows=1))
    with pytest.raises(PipelineError, match="simple_vqa"):
        judge_video(api, *clip, GOAL, F1, mode="simple_vqa",
                    config=JudgeConfig(continuity_windows=1), continuity=SCAN)  # fmt: skip
    assert api.seen == []  # refused before any call
    for bad in (-1, MAX_CONTINUITY_WINDOWS + 1):
        with pytest.raises(ValueError, match="continuity_windows"):
            JudgeConfig().with_overrides({"continuity_windows": bad})


# ---- the job, over HTTP to the loopback server ----------------------------------------------
@pytest.fixture(scope="module")
def corrupted_case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    return write_corrupted_case(tmp_path_factory.mktemp("corrupt"))


def _video(p: Project, name: str) -> Video:
    (v,) = [v for v in p.videos() if v.source_name == name]
    return v


def test_loopback_run_offers_the_scan_windows_and_records_option_and_windows(
    tmp_path: Path, corrupted_case: tuple[Path, Truth]
) -> None:
    case, truth = corrupted_case
    root = tmp_path / "p"
    with Project.create(root) as p:
        import_cases(p, case)
        tele, swap = _video(p, "teleport.mp4"), _video(p, "swap.mp4")
        scan = scan_video(p.media_path(tele.media))
        p.continuity.save(tele.media, scan)
        with write(p.db):  # the swap clip has no scan yet: the job makes one
            p.db.execute("DELETE FROM continuity_scans WHERE sha256 = ?", [swap.media])
    assert scan.windows, "the scan found the teleport"
    batches: dict[str, list[dict[str, Any]]] = {}
    with FakeServer(wire_responder(inspecting_judge())) as srv:
        with Project.open(root) as p:
            save_profile(p.profiles, ModelProfile(name="loop", base_url=srv.base_url,
                                                  model="fake-vlm", api_key_env=""))  # fmt: skip
        on = {"continuity_windows": 3}
        for batch, video, config in (("on", tele, on), ("swap", swap, on), ("off", tele, None)):
            with Project.open(root) as p:
                queue_judge(p, [video.id], profile="loop", batch=batch, config=config)
            seen = len(srv.chat_requests)
            stats = run_worker(root, drain=True, kinds=["judge.video"], log=lambda _r: None)
            assert (stats.done, stats.failed) == (1, 0)
            batches[batch] = [r.body for r in srv.chat_requests[seen:]]
    with Project.open(root) as p:
        runs = JudgeRuns(p.db)
        swap_scan = p.continuity.get(swap.media)
        assert swap_scan is not None  # made by the judge job, and stored
        run_of = {r.job_id: r for v in (tele.id, swap.id) for r in runs.runs(v)}
        on_run, swap_run, off_run = (run_of[p.jobs.query(batch=b)[0].id]
                                     for b in ("on", "swap", "off"))  # fmt: skip
        on_trace = runs.trace(on_run.id)
        stored = [runs.call_detail(on_run.id, c.seq).request for c in on_trace.calls]

    want = _rows(scan)  # the three strongest, in time order, as C1, C2 ...
    cut = truth["teleport.mp4"]["start_s"]
    assert any(c["start_s"] <= cut <= c["end_s"] for c in want)
    # on: the request's prompt names the windows' times at every Physics gate call, nowhere else
    assert len(batches["on"]) == len(batches["off"]) + 1  # the one inspection
    p_calls = [b for b in batches["on"] if _gate(b).startswith("P")]
    assert len(p_calls) == 5 and all(offered_in(body_messages(b)) == [want] for b in p_calls)
    assert all(offered_in(body_messages(b)) == [] for b in batches["on"] if b not in p_calls)
    # ... and the run records the option and exactly the windows shown, the audit trail too
    assert on_run.config["continuity_windows"] == 3
    assert on_run.config["continuity"] == {
        "scan_version": scan.version,
        "scan_windows": len(scan.windows),
        "offered": want,
    }
    assert any("candidate_windows" in json.dumps(r) for r in stored)
    assert swap_run.config["continuity"]["offered"] == _rows(swap_scan) != []
    assert all(offered_in(body_messages(b)) == [_rows(swap_scan)]
               for b in batches["swap"] if _gate(b).startswith("P"))  # fmt: skip
    # the model used them: its P1 inspection covers the first window offered
    (ins,) = [i.inspection for i in on_trace.inspections]
    assert ins.gate == "P1" and ins.start_s <= want[0]["start_s"] <= ins.end_s
    # off: neither windows in any request nor in the run; the scores are the same
    assert all(offered_in(body_messages(b)) == [] for b in batches["off"])
    assert not any(INTRO in json.dumps(b) for b in batches["off"])
    assert off_run.config["continuity_windows"] == 0 and "continuity" not in off_run.config
    assert (off_run.t100, off_run.p100, off_run.s) == (on_run.t100, on_run.p100, on_run.s)


def _gate(body: dict[str, Any]) -> str:
    names = [t["function"]["name"] for t in body["tools"]]
    if "submit_gate" not in names:
        return ""
    tool = body["tools"][names.index("submit_gate")]["function"]
    return str(tool["parameters"]["properties"]["gate"]["const"])


def _rows(scan: Scan | None) -> list[dict[str, Any]]:
    assert scan is not None
    top = sorted(sorted(scan.windows, key=lambda w: -w.score)[:3], key=lambda w: w.start_s)
    return [{"id": f"C{k}", "start_s": round(w.start_s, 3), "end_s": round(w.end_s, 3),
             "score": round(w.score, 2), "reason": w.reason}
            for k, w in enumerate(top, 1)]  # fmt: skip


# ---- queue and command line -----------------------------------------------------------------
def test_cli_flag_queues_the_option_and_refuses_what_no_run_could_use(
    tmp_path: Path, cases_dir: Path
) -> None:
    root = tmp_path / "p"
    with Project.create(root) as p:
        import_cases(p, cases_dir)
        save_profile(p.profiles, ModelProfile(name="local", base_url="http://x/v1", model="m"))
    base = ["judge", "run", "--project", str(root), "--case", "tidy_cups", "--profile", "local"]
    runner = CliRunner()
    res = runner.invoke(cli, [*base, "--batch", "c", "--continuity", "2"])
    assert res.exit_code == 0, res.output
    assert "offering 2 continuity window(s)" in res.output
    res = runner.invoke(cli, [*base, "--batch", "plain"])
    assert res.exit_code == 0 and "continuity" not in res.output
    with Project.open(root) as p:
        assert [j.payload["config"] for j in p.jobs.query(batch="c")] == [{"continuity_windows": 2}]
        assert [j.payload["config"] for j in p.jobs.query(batch="plain")] == [{}]
    res = runner.invoke(cli, [*base, "--continuity", "2", "--mode", "simple_vqa"])
    assert res.exit_code == 2 and "simple_vqa" in res.output, res.output
    res = runner.invoke(cli, [*base, "--continuity", str(MAX_CONTINUITY_WINDOWS + 1)])
    assert res.exit_code == 2 and "--continuity" in res.output
    res = runner.invoke(cli, [*base, "--continuity", str(MAX_CONTINUITY_WINDOWS)])
    assert res.exit_code == 0, res.output  # the CLI's literal bound is the judge's
    with Project.open(root) as p:
        video = p.videos("tidy_cups")[0].id
        with pytest.raises(QueueError, match="continuity_windows"):
            queue_judge(p, [video], profile="local", config={"continuity_windows": "3"})
        before = len(p.jobs.query())
        with pytest.raises(QueueError, match="unknown judge setting"):
            queue_judge(p, [video], profile="local", config={"continuity": 3})
        assert len(p.jobs.query()) == before  # nothing queued
