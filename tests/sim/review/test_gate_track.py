"""Rubric evidence on an episode's own video shows on its timeline: a rater who scored the
same clip (matched by content, not by name) and marked evidence at a gate has that mark placed
at the episode ticks its frames cover, with the subgoal, gate and answer given there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from annotation import Answer
from sim.review import import_bundle, load_timeline
from storage import Project, import_cases
from tests.casefactory import make_case
from tests.sim.review.bundle_harness import write_bundle


def test_gate_evidence_lands_on_the_ticks_of_its_frames(tmp_path: Path) -> None:
    case = make_case(tmp_path / "cases", "mug_drawer", n_videos=1)  # 12 frames at 12 fps
    bundle = write_bundle(tmp_path / "b")
    shutil.copy(case / "videos" / "gen_0.mp4", bundle / "head.mp4")
    meta = json.loads((bundle / "episode.json").read_text())
    meta["videos"] = [{"file": "head.mp4", "camera": "head", "offset_s": 1.0}]
    (bundle / "episode.json").write_text(json.dumps(meta))
    with Project.create(tmp_path / "p") as p:
        eid = import_bundle(p, bundle)
        assert [i for i in load_timeline(p, eid).items if i.track == "gates"] == []
        import_cases(p, case)
        (video,) = p.videos("mug_drawer")
        ann = p.annotations
        ann.ensure_rater("ada")
        sg = ann.add_subgoal("mug_drawer", "ada", source="gripper", action="open",
                             target="drawer")  # fmt: skip
        ann.set_answer(video.id, "ada", sg.id, "T1", Answer.FAIL)
        ann.add_evidence(video.id, "ada", start_frame=6, end_frame=11, subgoal_id=sg.id,
                         gate="T1", note="the handle slips")  # fmt: skip
        ann.add_evidence(video.id, "ada", start_frame=0, end_frame=0)  # no gate, no subgoal
        gates = [i for i in load_timeline(p, eid).items if i.track == "gates"]
    # offset 1.0 s = tick 10; frame 6 at 12 fps = 0.5 s = 5 ticks; frame 11 = 0.917 s → 9
    first, second = sorted(gates, key=lambda i: i.start)
    assert (first.start, first.end, first.kind) == (10, 10, "evidence")
    assert (second.start, second.end, second.kind) == (15, 19, "fail")
    assert "ada · S1 T1: fail — the handle slips" in second.label
    assert "head frames 6–11" in second.label
