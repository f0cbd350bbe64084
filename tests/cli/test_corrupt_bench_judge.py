"""``workbench corrupt-bench --project --profile``: the corrupted set imported as cases and judged
over HTTP (a loopback server) without and with the continuity scan's windows.

The scripted judge sees a violation only where it is told to look: at P1 it answers "no"
exactly when one of the candidate windows it is offered overlaps an edit, as a model that
inspects the right second would. Without the scan it is offered nothing, so every clip ties
with its re-encode and nothing is detected; with it, the clips whose scan found the edit are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from app.cli._main import cli
from judge import ModelProfile, queue_judge, save_profile, scripted_judge
from judge.models import Message, Tool, ToolCall
from judge.models.loopback import FakeServer
from judge.video.loopback import wire_responder
from sim.synthetic import DEMO_CASES, corrupt_set, write_case
from storage import JudgeRuns, Project, import_cases
from storage.media import FrameReader, index_video
from storage.media.continuity import Trial, detection, scan_video
from tests.continuity_case import offered_in

KINDS = ("teleport", "swap", "ghost")
UNIT_USD = (100 * 10.0 + 20 * 50.0) / 1e6  # the loopback's usage (100 in, 20 out) at the prices


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two clean clips: the first successful recording of two demo cases, drawn small and
    alone (the rest of the demo is not needed)."""
    out, clips = tmp_path_factory.mktemp("demo"), []
    for k, spec in enumerate(DEMO_CASES[:2]):
        take = next(v for v in spec.videos if v.role == "human-success")
        case = write_case(replace(spec, videos=(take,)), out, seed=0, case_index=k,
                          size=(320, 180), fps=24)  # fmt: skip
        clips.append(case / "videos" / "human_success_1.mp4")
    return clips


Key = tuple[float, float]


def _key(w: Any) -> Key:
    """A window as the judge is shown it (the offered rows round to the millisecond)."""
    if isinstance(w, dict):
        return (w["start_s"], w["end_s"])
    return (round(w.start_s, 3), round(w.end_s, 3))


@pytest.fixture(scope="module")
def on_edit(sources: list[Path], tmp_path_factory: pytest.TempPathFactory) -> set[Key]:
    """The scan windows that overlap their own clip's edit. The generator and the scan are
    deterministic, so the command's set has the same clips and its scans the same windows."""
    found: set[Key] = set()
    on_controls: set[Key] = set()
    for c in corrupt_set(sources, tmp_path_factory.mktemp("set")):
        windows = scan_video(Path(c.output)).windows
        if c.kind == "none":
            on_controls |= {_key(w) for w in windows}
        found |= {_key(w) for w in windows if c.kind != "none" and detection(
            Trial(c.source, c.kind, c.start_s, c.end_s, (w,))) is not None}  # fmt: skip
    assert found and not found & on_controls  # else the judge below could not tell them apart
    return found


def edit_seeing_judge(on_edit: set[Key]) -> Any:
    """Answers P1 "no" exactly when one of the windows it is offered lies on the edit."""
    sees, blind = scripted_judge(answers={"P1": "no"}), scripted_judge()

    def respond(stage: str, messages: Sequence[Message], tools: Sequence[Tool]) -> ToolCall:
        shown = [_key(w) for ws in offered_in(messages) for w in ws]
        looked = stage == "gate:P1" and any(w in on_edit for w in shown)
        return (sees if looked else blind)(stage, messages, tools)

    return respond


def _project(root: Path, base_url: str, **profile: Any) -> None:
    with Project.create(root) as p:
        save_profile(p.profiles, ModelProfile(name="loop", base_url=base_url, model="fake-vlm",
                                              api_key_env="", price_in_per_mtok=10.0,
                                              price_out_per_mtok=50.0, **profile))  # fmt: skip


def _sha8(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:8]


def _bench(sources: Sequence[Path], *extra: str) -> Any:
    args = ["corrupt-bench", *(a for s in sources for a in ("--videos", str(s))), *extra]
    return CliRunner().invoke(cli, args)


def test_the_scan_windows_let_the_judge_detect_what_it_misses_without(
    tmp_path: Path, sources: list[Path], on_edit: set[Key]
) -> None:
    root = tmp_path / "p"
    with FakeServer(wire_responder(edit_seeing_judge(on_edit))) as srv:
        _project(root, srv.base_url)
        res = _bench(sources, "--project", str(root), "--profile", "loop", "--json")
        sent = len(srv.chat_requests)
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert (report["sources"], report["trials"]) == (2, 8)  # the scan's report, as without
    judge = report["judge"]
    off, on = judge["without_scan"], judge["with_scan"]
    assert (off["continuity_windows"], on["continuity_windows"]) == (0, 3)
    assert judge["profile"] == "loop" and judge["goal"] == "Complete the task shown."

    with Project.open(root) as p:
        runs = JudgeRuns(p.db)
        batch_of = {j.id: j.batch for j in p.jobs.query()}
        assert set(batch_of.values()) == {off["batch"], on["batch"]}
        cases = {c.id: c for c in p.cases()}
        assert sorted(cases) == judge["cases"] and len(cases) == 2
        by_batch: dict[str, dict[str, Any]] = {off["batch"]: {}, on["batch"]: {}}
        model_of: dict[str, tuple[str, str]] = {}
        for case_id, case in cases.items():
            assert case.goal == "Complete the task shown."
            for v in p.videos(case_id):
                model_of[v.id] = (case_id, str(v.model))
                for r in runs.runs(v.id):
                    assert r.status == "done" and r.job_id is not None
                    by_batch[str(batch_of[r.job_id])][v.id] = r
            # f₁ is the source's first frame, exactly (PNG, and small enough not to be resized)
            src = next(s for s in sources if case_id.endswith(_sha8(s)))
            with FrameReader(src, index_video(src)) as reader:
                first = reader.read(0)
            image = np.asarray(Image.open(p.media_path(case.initial_image)).convert("RGB"))
            assert np.array_equal(image, first)
    assert sorted(m for _, m in model_of.values()) == sorted(
        ["ghost", "reencode", "swap", "teleport"] * 2)  # fmt: skip
    # both runs of every video are in the project, each with its option recorded
    assert len(by_batch[off["batch"]]) == len(by_batch[on["batch"]]) == 8
    assert all(r.config["continuity_windows"] == 0 and "continuity" not in r.config
               for r in by_batch[off["batch"]].values())  # fmt: skip
    assert all(r.config["continuity_windows"] == 3 for r in by_batch[on["batch"]].values())

    # without the scan every clip ties with its re-encode: nothing is detected
    for kind in KINDS:
        assert off[kind] == {"rate": 0.0, "ci95": [0.0, 0.0], "n": 2, "left_out": 0}, kind
    # with it, exactly the clips whose recorded offer covers an edit score below their control
    controls = {model_of[v][0]: r.p100 for v, r in by_batch[on["batch"]].items()
                if model_of[v][1] == "reencode"}  # fmt: skip
    assert set(controls.values()) == {100.0}  # no window on a control is on an edit
    for kind in KINDS:
        runs_k = [r for v, r in by_batch[on["batch"]].items() if model_of[v][1] == kind]
        seen = [any(_key(w) in on_edit for w in r.config["continuity"]["offered"])
                for r in runs_k]  # fmt: skip
        assert [r.p100 is not None and r.p100 < 100.0 for r in runs_k] == seen
        assert on[kind]["rate"] == sum(seen) / 2 and on[kind]["n"] == 2, kind
    assert sum(on[k]["rate"] for k in KINDS) > 0  # the scan made the difference
    assert (off["controls_scored"], on["controls_scored"], on["controls"]) == (2, 2, 2)
    # money as `judge status` counts it: every recorded call, here each request the server saw
    assert off["calls"] + on["calls"] == sent
    for b in (off, on):
        assert b["cost_usd"] == pytest.approx(b["calls"] * UNIT_USD)
        assert b["jobs"]["done"] == 8 and b["failed"] == []
    status = CliRunner().invoke(cli, ["judge", "status", "--project", str(root), "--batch",
                                      on["batch"], "--json"])  # fmt: skip
    assert json.loads(status.stdout)["cost_usd"] == on["cost_usd"]


def test_the_table_prints_both_batches_and_the_spend_cap_holds(
    tmp_path: Path, sources: list[Path], on_edit: set[Key]
) -> None:
    root = tmp_path / "p"
    with FakeServer(wire_responder(edit_seeing_judge(on_edit))) as srv:
        _project(root, srv.base_url, spend_cap_usd=1e-6)  # not even one call fits
        res = _bench(sources[:1], "--project", str(root), "--profile", "loop", "--continuity",
                     "2", "--goal", "Stack the blocks.")  # fmt: skip
        assert srv.chat_requests == []  # the cap is checked before a request is sent
    assert res.exit_code == 0, res.output
    for text in ("without scan", "with scan (2 windows)", "0 scored, 1 left out",
                 "controls scored", "0 of 1", "$0.0000 on 0 call(s)", "spend cap"):  # fmt: skip
        assert text in res.output, text
    with Project.open(root) as p:
        assert [c.goal for c in p.cases()] == ["Stack the blocks."]
        jobs = p.jobs.query()
        assert len(jobs) == 8 and all(j.status.value == "failed" for j in jobs)
        assert {j.payload["config"]["continuity_windows"] for j in jobs} == {0, 2}


def test_usage_errors_and_refusals_leave_the_project_as_it_was(
    tmp_path: Path, sources: list[Path], cases_dir: Path
) -> None:
    root = tmp_path / "p"
    _project(root, "http://127.0.0.1:9/v1")
    for extra in (["--project", str(root)], ["--profile", "loop"], ["--continuity", "2"],
                  ["--goal", "x"]):  # fmt: skip
        res = _bench(sources[:1], *extra)
        assert res.exit_code == 2 and "Usage:" in res.output, extra
    res = _bench(sources[:1], "--project", str(root), "--profile", "loop", "--continuity", "0")
    assert res.exit_code == 2 and "--continuity" in res.output
    res = _bench(sources[:1], "--project", str(root), "--profile", "nope")
    assert res.exit_code == 2 and "error: no model profile 'nope'" in res.output, res.output
    with Project.open(root) as p:
        assert p.cases() == [] and p.jobs.query() == []
        import_cases(p, cases_dir)
        queue_judge(p, [p.videos()[0].id], profile="loop", batch="mine")
    res = _bench(sources[:1], "--project", str(root), "--profile", "loop")
    assert res.exit_code == 2 and "1 judge job(s) queued or running (batch mine)" in res.output
    with Project.open(root) as p:
        assert len(p.cases()) == 2 and len(p.jobs.query()) == 1  # nothing added, nothing run


def test_the_help_states_the_defaults_the_command_uses() -> None:
    from app.cli import _corrupt_judge

    text = CliRunner().invoke(cli, ["corrupt-bench", "--help"]).output
    assert f"[default: {_corrupt_judge.DEFAULT_WINDOWS}]" in text
    assert f'"{_corrupt_judge.DEFAULT_GOAL}"' in " ".join(text.split())
