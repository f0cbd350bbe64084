"""Episode bundles from elsewhere: a harness of the tests' own writes one, it imports in one
transaction and reads back as the trace it described; bad lines are named by file and line and
leave the project as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.review import BundleFormatError, import_bundle, load_timeline, mismatches, read_bundle
from storage import Project
from tests.sim.review.bundle_harness import FAIL_TICK, write_bundle


def test_a_bundle_imports_and_reads_back(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "b")
    with Project.create(tmp_path / "p") as p:
        eid = import_bundle(p, bundle)
        ep = p.episodes.get(eid)
        assert (ep.scenario, ep.agent, ep.ticks, ep.status.value) == (
            "mug-from-drawer", "their-policy-v3", 60, "completed",
        )  # fmt: skip
        assert ep.config["imported"] is True
        tl = load_timeline(p, eid)
        assert [i.label for i in tl.on("actions")] == ["open the drawer"]
        assert tl.on("actions")[0].kind == "failed"
        assert [i.start for i in tl.on("rejections")] == [FAIL_TICK]
        assert [t.text for t in tl.turns][1] == "The drawer is open now."
        assert {i.kind for i in tl.on("events")} >= {"trigger", "resolve", "hold"}
        # the failing tick: the agent believes the drawer open, the world has it shut
        belief = tl.belief_at(FAIL_TICK)
        assert belief is not None and tl.belief_at(FAIL_TICK - 1) is None
        wrong = mismatches(tl.graphs.graph_at(FAIL_TICK), belief)
        assert [(m.obj, m.what, m.world, m.belief) for m in wrong] == [("drawer", "open", "0", "1")]
        assert [i.kind for i in tl.on("belief")] == ["wrong"]
        assert [c[1] for c in tl.contract_at(60)] == [False, False]
        assert p.episodes.metrics(eid)["success"] == 0.0


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda lines: lines.insert(3, "{not json"), r"stream.jsonl: line 4: not JSON"),
        (lambda lines: lines.__setitem__(1, json.dumps({"tick": 2, "type": "say",
                                                        "speaker": "robot", "text": "hi"})),
         r"stream.jsonl: line 2: say.speaker: Input should be 'user' or 'assistant'"),
        (lambda lines: lines.__setitem__(2, json.dumps({"tick": 99, "type": "action",
                                                        "text": "x"})),
         r"stream.jsonl: line 3: tick: 99 is past the episode's 60 ticks"),
        (lambda lines: lines.pop(0), r"the world's state at tick 0 is missing"),
        (lambda lines: lines.__setitem__(4, json.dumps({"tick": 5, "type": "teleport"})),
         r"stream.jsonl: line 5: .*type"),
    ],
)  # fmt: skip
def test_bad_lines_are_named_and_nothing_is_stored(tmp_path: Path, edit: object,
                                                   message: str) -> None:  # fmt: skip
    bundle = write_bundle(tmp_path / "b")
    stream = bundle / "stream.jsonl"
    lines = stream.read_text().splitlines()
    edit(lines)  # type: ignore[operator]
    stream.write_text("\n".join(lines) + "\n")
    with Project.create(tmp_path / "p") as p:
        with pytest.raises(BundleFormatError, match=message):
            import_bundle(p, bundle)
        assert p.episodes.list() == []


def test_meta_errors(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "b")
    meta = json.loads((bundle / "episode.json").read_text())
    (bundle / "episode.json").write_text(json.dumps({**meta, "tick_s": 0}))
    with pytest.raises(BundleFormatError, match=r"episode.json: tick_s: Input should be greater"):
        read_bundle(bundle)
    (bundle / "episode.json").write_text(json.dumps({**meta, "videos": [
        {"file": "videos/head.mp4", "camera": "head"}]}))  # fmt: skip
    with pytest.raises(BundleFormatError, match=r"videos/head.mp4 is not in the bundle"):
        read_bundle(bundle)
    with pytest.raises(BundleFormatError, match=r"missing"):
        read_bundle(tmp_path / "nowhere")
