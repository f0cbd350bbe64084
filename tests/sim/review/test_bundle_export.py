"""Any stored episode goes out as an episode bundle and comes back with the same timeline: the
project's own portable format, for recorded interactive episodes and demonstrations alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.episode import open_scenario
from sim.interact import run_interactive
from sim.review import BundleFormatError, export_bundle, import_bundle, load_timeline, read_bundle
from sim.teleop import Recorder, store_demonstration
from sim.users import PROFILES
from storage import Project
from tests.sim.teleop.operator import Operator, pick_and_place

# A bundle says what each line was, not the dialogue move behind it ("accept"), nor the spans
# a goal condition held in before its last (only the tick it became and stayed true).
SAME = ("actions", "rejections", "user", "assistant", "events", "belief")


def _items(p: Project, eid: str) -> list[tuple[str, int, int]]:
    return sorted((i.track, i.start, i.end) for i in load_timeline(p, eid).items
                  if i.track in SAME)  # fmt: skip


def test_an_interactive_episode_round_trips_through_a_bundle(tmp_path: Path) -> None:
    with Project.create(tmp_path / "a") as a:
        eid = run_interactive(bound=open_scenario("cheeseburger"), persona=PROFILES["novice"],
                              project=a).episode_id  # fmt: skip
        assert eid is not None
        out = export_bundle(a, eid, tmp_path / "b")
        before = _items(a, eid)
        original = load_timeline(a, eid)
        graph_end = original.graphs.graph_at(original.episode.ticks)
        witnesses = [s if h else None for _t, h, s in original.contract_at(original.ticks)]
        with pytest.raises(BundleFormatError, match="already exists"):
            export_bundle(a, eid, out)
    meta = read_bundle(out).meta  # it reads as any bundle
    assert meta.scenario == "cheeseburger" and [g.true_since for g in meta.goal] == witnesses
    with Project.create(tmp_path / "c") as c:
        back = import_bundle(c, out)
        after = _items(c, back)
        tl = load_timeline(c, back)
        assert tl.graphs.graph_at(tl.episode.ticks).relations == graph_end.relations
    assert {t for t, *_ in before} & {"actions", "user", "assistant", "events"}
    # the same actions, refusals, dialogue and events, tick for tick
    assert after == before


def test_a_demonstration_goes_out_with_its_video(tmp_path: Path) -> None:
    rec = Recorder(open_scenario("stack-two"), "wb6", cameras=("front",), size=(160, 120))
    rec.start()
    pick_and_place(Operator(rec.teleop, rec.step), "brick_red", "brick_blue")
    (demo,) = rec.stop()
    rec.close()
    with Project.create(tmp_path / "a") as a:
        eid = store_demonstration(a, demo)
        out = export_bundle(a, eid, tmp_path / "b")
    meta = read_bundle(out).meta
    assert meta.success is True and [v.camera for v in meta.videos] == ["front"]
    assert (out / "front.mp4").stat().st_size > 0
    with Project.create(tmp_path / "c") as c:
        back = import_bundle(c, out)
        video = next(i for i in load_timeline(c, back).items if i.track == "video")
        assert video.end - video.start == pytest.approx(demo.steps, abs=1)
