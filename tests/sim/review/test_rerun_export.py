"""Export to Rerun: the ``.rrd`` read back with Rerun's own reader holds the episode's entities
on its ``tick`` / ``sim_time`` timelines, boxes where the world had its objects, utterances at
their ticks, the contract as 0/1, belief ghosts where the agent was wrong, and the videos; a
missing rerun-sdk is a user error with the install hint."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from annotation import UserError
from sim.episode import open_scenario, run_episode
from sim.interact import run_interactive
from sim.review import (
    RERUN_INSTALL_HINT,
    RerunMissingError,
    WorldCursor,
    export_rerun,
    import_bundle,
    load_timeline,
)
from sim.users import PROFILES
from storage import Project
from tests.sim.review.bundle_harness import FAIL_TICK, write_bundle


class Rrd:
    """The rows of an .rrd file by entity path (Rerun's own reader, no viewer)."""

    def __init__(self, path: Path) -> None:
        from rerun.chunk import RrdReader

        reader = RrdReader(path)
        (rec,) = reader.recordings()
        assert rec.application_id == "rollout-workbench"
        self.blueprints = reader.blueprints()
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.static: dict[str, dict[str, Any]] = defaultdict(dict)
        for chunk in reader.stream():
            batch = chunk.to_record_batch().to_pydict()
            n = chunk.num_rows
            for r in range(n):
                row = {k: v[r] for k, v in batch.items() if k != "rerun.controls.RowId"}
                if chunk.is_static:
                    self.static[chunk.entity_path].update(row)
                else:
                    self.rows[chunk.entity_path].append(row)
        for rows in self.rows.values():
            rows.sort(key=lambda r: r["tick"])

    @property
    def entities(self) -> set[str]:
        return set(self.rows) | set(self.static)

    def latest(self, entity: str, tick: int, column: str) -> Any:
        """The value of ``column`` on ``entity`` as the viewer shows it at ``tick`` (latest-at);
        None when cleared or never written."""
        best = None
        for r in self.rows.get(entity, []):
            if r["tick"] > tick:
                break
            if r.get(column) is not None:
                best = r[column]
            elif any(k.startswith("Clear:") and r[k] is not None for k in r):
                best = None
        return best

    def texts(self, entity: str) -> list[tuple[int, str, str]]:
        return [(r["tick"], r["TextLog:text"][0], r["TextLog:level"][0])
                for r in self.rows.get(entity, []) if r.get("TextLog:text")]  # fmt: skip

    def ticks(self) -> tuple[int, int]:
        ts = [r["tick"] for rows in self.rows.values() for r in rows]
        return min(ts), max(ts)


def centre(rrd: Rrd, obj: str, tick: int) -> tuple[float, ...] | None:
    c = rrd.latest(f"/world/objects/{obj}", tick, "Boxes3D:centers")
    return None if c is None else tuple(c[0])


@pytest.fixture(scope="module")
def dialogue(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str, Path, Any]:
    """A symbolic episode with a simulated user and an assistant talking, exported."""
    root = tmp_path_factory.mktemp("rerun")
    project = Project.create(root / "p")
    ep = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["balanced"],
                         project=project)  # fmt: skip
    assert ep.episode_id is not None
    result = export_rerun(project, ep.episode_id, root / "out" / "episode.rrd")
    return project, ep.episode_id, root / "out" / "episode.rrd", result


def test_symbolic_dialogue_episode_reads_back(dialogue: tuple[Project, str, Path, Any]) -> None:
    project, eid, path, result = dialogue
    rrd = Rrd(path)
    ep = project.episodes.get(eid)
    tl = load_timeline(project, eid)
    ids = set(tl.graphs.graph_at(0).nodes)
    assert {f"/world/objects/{k}" for k in ids} <= rrd.entities
    assert {"/episode", "/world/relations", "/actions", "/dialogue/user", "/dialogue/assistant",
            "/dialogue/replies", "/events", "/"} <= rrd.entities  # fmt: skip
    assert len(rrd.blueprints) == 1
    assert rrd.ticks() == (0, ep.ticks)
    assert result.poses == "replayed" and result.first_tick == 0 and result.last_tick == ep.ticks
    # boxes sit where the replayed world had each object, at every tick
    cursor = WorldCursor(project, eid)
    try:
        moved = set()
        for t in range(ep.ticks + 1):
            cursor.seek(t)
            g = cursor.world.graph
            for k, n in g.nodes.items():
                got = centre(rrd, k, t)
                if n.visible or g.held() == k:
                    assert got == pytest.approx(n.pos, abs=1e-3), (k, t)
                    if got != centre(rrd, k, 0):
                        moved.add(k)
    finally:
        cursor.close()
    assert "patty" in moved  # the check saw objects move, not only rest
    # only changes are written: far fewer boxes than objects × ticks
    assert result.box_updates < len(ids) * (ep.ticks + 1) / 5
    assert result.objects == len(ids)
    # every utterance at its tick, with its text
    for who in ("user", "assistant"):
        said = [(t.tick, t.text) for t in project.episodes.turns(eid)
                if t.speaker == who and t.text]  # fmt: skip
        logged = [(t, text) for t, text, _ in rrd.texts(f"/dialogue/{who}")]
        assert said and all(s in logged for s in said), who
    # accepted actions at their ticks, refusals as warnings
    accepted = [(a.tick, a.text) for a in project.episodes.actions(eid) if a.accepted]
    starts = [(t, text.rsplit(" [", 1)[0]) for t, text, _ in rrd.texts("/actions")
              if text.endswith("]")]  # fmt: skip
    assert starts == accepted
    assert all(level == "WARN" for _, _, level in rrd.texts("/rejections"))
    # the contract as 0/1 steps, equal to the timeline's contract at every tick
    for j, c in enumerate(tl.conditions):
        entity = next(e for e in rrd.entities if e.startswith("/contract/")
                      and rrd.static[e].get("SeriesLines:names") == [c.text])  # fmt: skip
        for t in range(0, ep.ticks + 1, 7):
            value = rrd.latest(entity, t, "Scalars:scalars")
            assert value == [1.0 if tl.contract_at(t)[j][1] else 0.0], (c.text, t)
    doc = rrd.static["/episode"]["TextDocument:text"][0]
    assert f"Episode {eid[:8]}" in doc and "cook-patty" in doc and "## Contract" in doc


def test_a_physics_episode_with_video(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        ep = run_episode(open_scenario("stack-two"), mode="physics", project=p,
                         videos=["front"], video_size=(160, 120))  # fmt: skip
        assert ep.episode_id is not None
        result = export_rerun(p, ep.episode_id, tmp_path / "phys.rrd")
        stored = p.episodes.get(ep.episode_id)
        cursor = WorldCursor(p, ep.episode_id)
        try:
            rrd = Rrd(tmp_path / "phys.rrd")
            for t in (0, stored.ticks // 3, stored.ticks // 2, stored.ticks):
                cursor.seek(t)
                for k, n in cursor.world.graph.nodes.items():
                    if n.visible:
                        assert centre(rrd, k, t) == pytest.approx(n.pos, abs=1e-3), (k, t)
        finally:
            cursor.close()
    assert result.poses == "replayed"
    assert result.videos["front"].startswith("the MP4 (h264) as AssetVideo")
    assert "AssetVideo:blob" in rrd.static["/video/front"]
    refs = rrd.rows["/video/front"]
    # one frame a tick (fps = 1/Δ), each referenced at the tick it shows
    assert [r["tick"] for r in refs] == list(range(stored.ticks + 1))
    stamps = [r["VideoFrameReference:timestamp"][0] for r in refs]
    assert stamps[1] - stamps[0] == pytest.approx(stored.delta * 1e9, rel=1e-3)
    assert rrd.ticks() == (0, stored.ticks)
    assert not any(e.startswith("/dialogue") for e in rrd.entities)


def write_mkv(path: Path, frames: int = 12) -> None:
    """An H.264 video in a Matroska file: fine for the workbench, not a file Rerun plays."""
    import av

    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=10)
        s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
        for i in range(frames):
            img = np.full((48, 64, 3), 20 * i, np.uint8)
            f = av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuv420p")
            f.pts, f.time_base = i, Fraction(1, 10)
            for packet in s.encode(f):
                c.mux(packet)
        for packet in s.encode(None):
            c.mux(packet)


def test_an_imported_bundle_with_belief_and_a_video_rerun_cannot_play(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "b")
    write_mkv(bundle / "side.mkv")
    meta = json.loads((bundle / "episode.json").read_text())
    meta["videos"] = [{"file": "side.mkv", "camera": "side", "offset_s": 0.5}]
    (bundle / "episode.json").write_text(json.dumps(meta))
    with Project.create(tmp_path / "p") as p:
        eid = import_bundle(p, bundle)
        result = export_rerun(p, eid, tmp_path / "b.rrd")
    rrd = Rrd(tmp_path / "b.rrd")
    assert result.poses == "stored" and rrd.ticks()[0] == 0
    # the failing tick: a red ghost of the drawer where the agent believes it open
    ghost = "/belief/objects/drawer"
    assert rrd.latest(ghost, FAIL_TICK - 1, "Boxes3D:labels") is None
    label = rrd.latest(ghost, FAIL_TICK, "Boxes3D:labels")
    assert label == ["drawer? open: world 0, believed 1"]
    assert rrd.latest(ghost, FAIL_TICK, "Boxes3D:colors") == [0xE62626FF]
    assert [(t, lv) for t, _, lv in rrd.texts("/belief/statements")] == [(FAIL_TICK, "WARN")]
    assert (FAIL_TICK, "refused: pick up the red mug: mug_red is inside the closed drawer",
            "WARN") in rrd.texts("/rejections")  # fmt: skip
    assert centre(rrd, "mug_red", 60) == pytest.approx((0.3, 0.0, 0.38))
    # frames as JPEG from episode time 0.5 s (tick 5) on, one a tick at 10 fps and Δ = 0.1 s
    assert result.videos["side"].startswith("12 JPEG frames (Rerun cannot play the file")
    frames = rrd.rows["/video/side"]
    assert [r["tick"] for r in frames] == list(range(5, 17))
    assert all(r["EncodedImage:media_type"] == ["image/jpeg"] for r in frames)
    assert bytes(frames[0]["EncodedImage:blob"][0])[:2] == b"\xff\xd8"  # a JPEG


def test_an_episode_from_before_dialogue(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        ep = run_episode(open_scenario("stack-two"), mode="symbolic", project=p)
        assert ep.episode_id is not None
        result = export_rerun(p, ep.episode_id, tmp_path / "old.rrd")
        ticks = p.episodes.get(ep.episode_id).ticks
    rrd = Rrd(tmp_path / "old.rrd")
    assert "/actions" in rrd.entities and not any(
        e.startswith(("/dialogue", "/belief", "/video")) for e in rrd.entities
    )
    assert rrd.ticks() == (0, ticks) and result.texts["actions"] >= 2 and result.predicates >= 1


def test_a_replay_that_leaves_the_record_falls_back_to_the_stored_graphs(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        ep = run_episode(open_scenario("stack-two"), mode="symbolic", project=p)
        assert ep.episode_id is not None
        eid = ep.episode_id
        p.db.execute("UPDATE sim_ticks SET state_hash = 'tampered' WHERE episode_id = ? "
                     "AND tick >= 17", [eid])  # fmt: skip
        result = export_rerun(p, eid, tmp_path / "d.rrd")
        tl = load_timeline(p, eid)
    assert result.poses == "stored" and "at tick 17" in result.poses_note
    assert "at tick 17" in result.summary()
    rrd = Rrd(tmp_path / "d.rrd")  # one recording, written once from the stored graphs
    for t in tl.graphs.ticks:
        g = tl.graphs.graph_at(t)
        for k, n in g.nodes.items():
            assert centre(rrd, k, t) == pytest.approx(n.pos, abs=1e-3), (k, t)
    assert not list(tmp_path.glob(".*.part"))


def test_without_rerun_sdk_the_error_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Project.create(tmp_path / "p") as p:
        ep = run_episode(open_scenario("stack-two"), mode="symbolic", project=p)
        assert ep.episode_id is not None
        monkeypatch.setitem(sys.modules, "rerun", None)  # `import rerun` raises ImportError
        with pytest.raises(RerunMissingError) as err:
            export_rerun(p, ep.episode_id, tmp_path / "x.rrd")
    assert isinstance(err.value, UserError)
    assert RERUN_INSTALL_HINT == "pip install 'rollout-workbench[rerun]'"
    assert RERUN_INSTALL_HINT in str(err.value)
    assert not (tmp_path / "x.rrd").exists()


def test_cli_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.cli._main import cli

    with Project.create(tmp_path / "p") as p:
        ep = run_episode(open_scenario("stack-two"), mode="symbolic", project=p)
        assert ep.episode_id is not None
        eid = ep.episode_id
    out = tmp_path / "e.rrd"
    res = CliRunner().invoke(cli, ["episode", "export", eid[:8], "--rrd", str(out),
                                   "--project", str(tmp_path / "p")])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert f"wrote {out}" in res.output and f"episode {eid[:8]}" in res.output
    assert "box updates" in res.output and "rerun " in res.output
    assert Rrd(out).ticks()[0] == 0
    res = CliRunner().invoke(cli, ["episode", "export", "nosuchid", "--rrd", str(out),
                                   "--project", str(tmp_path / "p")])  # fmt: skip
    assert res.exit_code == 2 and "error:" in res.output
    monkeypatch.setitem(sys.modules, "rerun", None)
    res = CliRunner().invoke(cli, ["episode", "export", eid[:8], "--rrd", str(out),
                                   "--project", str(tmp_path / "p")])  # fmt: skip
    assert res.exit_code == 2
    assert "error: exporting to Rerun needs rerun-sdk" in res.output
    assert RERUN_INSTALL_HINT in res.output
