"""Episode bundles from someone else, attacked (issue 27): every hostile input is refused in one
line naming the file and the field, leaves the project exactly as it was, writes nothing
outside the project or the chosen export folder, and stays under 1 GB of memory; the same
bundle twice is one episode; a big import lets other writers through; export turns camera
names into safe, distinct file names inside its folder."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import sim.review._bundle as reader
from annotation import UserError
from app.cli._main import cli
from sim.review import import_bundle, import_episode_bundle, read_bundle
from storage import Project
from storage.guard import LIMITS
from tests.casefactory import write_video
from tests.sim.review.bundle_harness import write_bundle

REPO = Path(__file__).resolve().parents[3]
GB = 2**30
Edit = Callable[[Path, Path], None]  # (bundle folder, a folder outside it with private files)


def _meta(bundle: Path, **changes: Any) -> None:
    meta = json.loads((bundle / "episode.json").read_text())
    (bundle / "episode.json").write_text(json.dumps({**meta, **changes}))


def _videos(bundle: Path, *entries: tuple[str, str]) -> None:
    _meta(bundle, videos=[{"file": f, "camera": c} for f, c in entries])


def _add_line(bundle: Path, raw: bytes) -> None:
    with (bundle / "stream.jsonl").open("ab") as f:
        f.write(raw + b"\n")


def _sparse(path: Path, size: int = 2_300_000_000) -> None:
    """A file of ``size`` zero bytes that takes no disk (and no time) to make."""
    path.unlink(missing_ok=True)
    with path.open("wb") as f:
        f.truncate(size)


def _playlist(bundle: Path, private: Path, name: str) -> None:
    write_video(private / "seg.ts")
    (bundle / name).write_text(f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n"
                               f"{private / 'seg.ts'}\n#EXT-X-ENDLIST\n")  # fmt: skip
    _videos(bundle, (name, "head"))


def _concat(bundle: Path, _private: Path) -> None:
    write_video(bundle / "part.mp4")
    (bundle / "clip.ffconcat").write_text("ffconcat version 1.0\nfile part.mp4\n")
    _videos(bundle, ("clip.ffconcat", "head"))


def _deep(n: int = 100_000) -> bytes:
    """A state line whose one object has an attribute nested ``n`` deep."""
    return (b'{"tick": 1, "type": "state", "objects": [{"id": "x", "attrs": {"a": '
            + b"[" * n + b"]" * n + b"}}]}")  # fmt: skip


# (id, edit, message: the file and the field, big: run in a child and measure its memory)
HOSTILE: list[tuple[str, Edit, str, bool]] = [
    ("video-absolute", lambda b, o: _videos(b, (str(o / "secret.mp4"), "head")),
     r"episode\.json: videos\.0\.file '/.*secret\.mp4' is absolute", False),
    ("video-climbs", lambda b, o: _videos(b, ("../private/secret.mp4", "head")),
     r"episode\.json: videos\.0\.file '\.\./private/secret\.mp4' leads outside", False),
    ("video-symlink-out", lambda b, o: (os.symlink(o / "secret.mp4", b / "head.mp4"),
                                        _videos(b, ("head.mp4", "head"))),
     r"episode\.json: videos\.0\.file 'head\.mp4' leads outside", False),
    ("manifest-symlink-out", lambda b, o: ((b / "episode.json").rename(o / "m.json"),
                                           os.symlink(o / "m.json", b / "episode.json")),
     r"bundle file 'episode\.json' leads outside", False),
    ("stream-symlink-out", lambda b, o: ((b / "stream.jsonl").rename(o / "s.jsonl"),
                                         os.symlink(o / "s.jsonl", b / "stream.jsonl")),
     r"bundle file 'stream\.jsonl' leads outside", False),
    ("stream-2.3GB", lambda b, o: _sparse(b / "stream.jsonl"),
     r"stream\.jsonl is 2,300,000,000 bytes; the limit is", True),
    ("manifest-2.3GB", lambda b, o: _sparse(b / "episode.json"),
     r"episode\.json is 2,300,000,000 bytes; the limit is", True),
    ("line-too-long", lambda b, o: _sparse(b / "stream.jsonl", LIMITS.line_bytes + 10),
     r"stream\.jsonl: line 1 is longer than", True),
    ("100k-videos", lambda b, o: (write_video(b / "v.mp4"),
                                  _videos(b, *[("v.mp4", f"c{k}") for k in range(100_000)])),
     r"episode\.json: videos is 100,000 entries; the limit is 1,000", True),
    ("stream-nested-100k", lambda b, o: _add_line(b, _deep()),
     r"stream\.jsonl: line 10 is not valid JSON \(nested too deep\)", False),
    ("stream-nested-100", lambda b, o: _add_line(b, _deep(100)),
     r"stream\.jsonl: line 10 is nested deeper than 64", False),
    ("manifest-nested-100k", lambda b, o: (b / "episode.json").write_bytes(
        b'{"format": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
     r"episode\.json is not valid JSON \(nested too deep\)", False),
    ("ticks-1e30", lambda b, o: _meta(b, ticks=10**30),
     r"episode\.json: ticks: Input should be less than or equal to 9223372036854775807", False),
    ("seed-1e30", lambda b, o: _meta(b, seed=-(10**30)),
     r"episode\.json: seed: Input should be greater than or equal to", False),
    ("line-tick-1e30", lambda b, o: _add_line(b, b'{"tick": %d, "type": "say", "speaker": '
                                              b'"user", "text": "hi"}' % 10**30),
     r"stream\.jsonl: line 10: say\.tick: Input should be less than or equal", False),
    ("tick_s-infinite", lambda b, o: (b / "episode.json").write_text(
        (b / "episode.json").read_text().replace('"tick_s": 0.1', '"tick_s": Infinity')),
     r"episode\.json: tick_s: Input should be a finite number", False),
    ("stream-not-utf8", lambda b, o: _add_line(b, b'{"tick": 1, "type": "say", "speaker": '
                                               b'"user", "text": "\xff\xfe"}'),
     r"stream\.jsonl: line 10 is not UTF-8", False),
    ("manifest-not-utf8", lambda b, o: (b / "episode.json").write_bytes(
        (b / "episode.json").read_bytes().replace(b"mug-from-drawer", b"mug\xff")),
     r"episode\.json is not UTF-8", False),
    ("utterance-too-long", lambda b, o: _add_line(b, json.dumps(
        {"tick": 1, "type": "say", "speaker": "user", "text": "x" * 30_000}).encode()),
     r"stream\.jsonl: line 10: say\.text: String should have at most 20000 characters", False),
    ("video-hls-playlist", lambda b, o: _playlist(b, o, "head.m3u8"),
     r"episode\.json: videos\.0\.file: head\.m3u8: is an HLS playlist, not a video file", False),
    ("video-playlist-renamed", lambda b, o: _playlist(b, o, "head.mp4"),
     r"episode\.json: videos\.0\.file: head\.mp4: is an HLS playlist, not a video file", False),
    ("video-concat-list", _concat,
     r"episode\.json: videos\.0\.file: clip\.ffconcat: is an FFmpeg concat list", False),
]  # fmt: skip


def _state(p: Project) -> tuple[object, ...]:
    """What a refused import must not change: the database's health, the row count of every
    table, and what is under media/."""
    db = p.db
    ok = db.execute("PRAGMA integrity_check").fetchone()[0]
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    counts = {t: db.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0] for t in tables}
    files = sorted(str(f.relative_to(p.root)) for f in p.media_dir.rglob("*"))
    return ok, counts, files


_CHILD = """
import json, resource, sys
from pathlib import Path
vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + 3 * 2**30, resource.RLIM_INFINITY))  # a safety net
from annotation import UserError
from sim.review import import_bundle
from storage import Project
try:
    with Project.open(Path(sys.argv[2])) as p:
        import_bundle(p, Path(sys.argv[1]))
    out = {"error": None}
except UserError as e:
    out = {"error": str(e)}
except BaseException as e:
    out = {"bug": f"{type(e).__name__}: {e}"}
# VmHWM is this process's own peak (ru_maxrss would carry the forking test process's size over)
hwm = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
out["maxrss"] = int(hwm) * 1024
print(json.dumps(out))
"""


def _import_in_child(bundle: Path, project: Path) -> dict[str, Any]:
    run = subprocess.run([sys.executable, "-c", _CHILD, str(bundle), str(project)], cwd=REPO,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    got: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return got


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A valid bundle, a private folder beside it (a video the bundle must not take in) and a
    sentinel folder nothing may be written to."""
    private, sentinel = tmp_path / "private", tmp_path / "elsewhere"
    write_video(private / "secret.mp4", seed=7)
    sentinel.mkdir()
    return write_bundle(tmp_path / "bundle"), private, sentinel


@pytest.mark.parametrize(("edit", "message", "big"), [h[1:] for h in HOSTILE],
                         ids=[h[0] for h in HOSTILE])  # fmt: skip
def test_a_hostile_bundle_is_refused_and_changes_nothing(
    world: tuple[Path, Path, Path], tmp_path: Path, edit: Edit, message: str, big: bool
) -> None:
    bundle, private, sentinel = world
    edit(bundle, private)
    root = tmp_path / "project"
    with Project.create(root) as p:
        import_bundle(p, write_bundle(tmp_path / "other"))  # an episode already there
        before = _state(p)
    private_before = sorted(os.listdir(private))
    if big:
        got = _import_in_child(bundle, root)
        assert got.get("bug") is None, got["bug"]
        assert got["error"] is not None
        assert got["maxrss"] < 1 * GB, f"peak memory {got['maxrss'] / GB:.2f} GB"
        text = got["error"]
    else:
        with Project.open(root) as p, pytest.raises(UserError) as err:
            import_bundle(p, bundle)
        text = str(err.value)
    assert "\n" not in text
    assert re.search(message, text), text
    with Project.open(root) as p:
        assert _state(p) == before
        assert before[0] == "ok"
    assert os.listdir(sentinel) == [] and sorted(os.listdir(private)) == private_before


def test_the_same_bundle_twice_is_one_episode_and_says_so(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "b")
    write_video(bundle / "head.mp4")
    _videos(bundle, ("head.mp4", "head"))
    root = tmp_path / "p"
    with Project.create(root) as p:
        first = import_episode_bundle(p, bundle)
        before = _state(p)
        again = import_episode_bundle(p, bundle)
        assert (again.episode_id, again.added) == (first.episode_id, False)
        assert import_bundle(p, bundle) == first.episode_id
        assert _state(p) == before
    res = CliRunner().invoke(cli, ["episode", "import", str(bundle), "--project", str(root)])
    assert res.exit_code == 0, res.output
    assert "was imported before" in res.output and "nothing changed" in res.output
    # a changed bundle is another episode
    _add_line(bundle, b'{"tick": 3, "type": "say", "speaker": "user", "text": "and fast"}')
    with Project.open(root) as p:
        other = import_episode_bundle(p, bundle)
        assert other.added and other.episode_id != first.episode_id


def test_a_big_import_lets_another_writer_through(tmp_path: Path) -> None:
    """The largest allowed number of videos and a long stream: the import works outside the
    write lock and holds it briefly, so `episode note` in another connection (the project's
    usual busy timeout) goes through in well under a second or two."""
    bundle = write_bundle(tmp_path / "b", ticks=3000)
    write_video(bundle / "cam.mp4", n=24)
    _videos(bundle, *[("cam.mp4", f"cam{k}") for k in range(LIMITS.videos)])
    objs = [{"id": f"o{k}", "type": "box", "pos": [k, 0, 0]} for k in range(40)]
    with (bundle / "stream.jsonl").open("a") as f:
        for t in range(21, 3000):  # the harness's own states are at 0 and 20
            f.write(json.dumps({"tick": t, "type": "state", "objects": objs[: 1 + t % 40]}) + "\n")
    root = tmp_path / "p"
    with Project.create(root) as p:
        eid = import_bundle(p, write_bundle(tmp_path / "other"))
    waits: list[float] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def writer() -> None:
        with Project.open(root) as q:
            k = 0
            while not done.is_set():
                t0 = time.monotonic()
                try:
                    q.notes.set_note(eid, f"note {k}", scope="tester")
                except BaseException as e:  # "database is locked" is what this test is about
                    errors.append(e)
                    return
                waits.append(time.monotonic() - t0)
                k += 1
                time.sleep(0.02)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with Project.open(root) as p:
            new = import_bundle(p, bundle)
            assert len(p.episodes.artifacts(new)) == LIMITS.videos
            assert p.episodes.get(new).ticks == 3000
    finally:
        done.set()
        thread.join()
    assert errors == []
    assert len(waits) > 3 and max(waits) < 2.0, f"longest wait {max(waits):.2f} s"


def _export_world(tmp_path: Path, cameras: list[str], suffixes: list[str] | None = None) -> str:
    """A project with one imported episode whose videos have these camera names."""
    bundle = write_bundle(tmp_path / "b")
    files = []
    for k, _cam in enumerate(cameras):
        name = f"v{k}{(suffixes or ['.mp4'] * len(cameras))[k]}"
        write_video(bundle / f"v{k}.mp4", seed=k).rename(bundle / name)  # an MP4 by any name
        files.append(name)
    _videos(bundle, *zip(files, cameras, strict=True))
    with Project.create(tmp_path / "p") as p:
        return import_bundle(p, bundle)


def test_export_keeps_hostile_camera_names_inside_its_folder(tmp_path: Path) -> None:
    sentinel = tmp_path / "elsewhere"
    sentinel.mkdir()
    cameras = ["../../../../elsewhere/pwned", f"{sentinel}/pwned_abs", "front", "a/b", "a_b",
               "Cam", "cam", "", "..", "episode"]  # fmt: skip
    eid = _export_world(tmp_path, cameras, [".mp4"] * 9 + [".json"])
    out = tmp_path / "x" / "y" / "z" / "out"  # four levels up from its staging folder: tmp_path
    res = CliRunner().invoke(cli, ["episode", "export", eid, "--bundle", str(out),
                                   "--project", str(tmp_path / "p")])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert os.listdir(sentinel) == []
    written = sorted(os.listdir(out))
    assert len(written) == 2 + len(cameras)  # no camera overwrote another, or the manifest
    meta = read_bundle(out).meta  # and it still reads as a bundle
    own = {"episode.json", "stream.jsonl"}
    assert sorted(v.file for v in meta.videos) == sorted(set(written) - own)
    files = {v.camera: v.file for v in meta.videos}
    assert files["../../../../elsewhere/pwned"] == "elsewhere_pwned.mp4"
    assert files["front"] == "front.mp4" and files["episode"] == "episode-2.json"
    assert {files["a/b"], files["a_b"]} == {"a_b.mp4", "a_b-2.mp4"}
    assert {files["Cam"].casefold(), files["cam"].casefold()} == {"cam.mp4", "cam-2.mp4"}
    for f in written:
        assert (out / f).is_file() and not (out / f).is_symlink()
    # the bundle imports back with the cameras' own names and each its own video
    with Project.create(tmp_path / "q") as q:
        back = import_bundle(q, out)
        assert sorted(a.camera for a in q.episodes.artifacts(back)) == sorted(cameras)
        assert len({a.media_sha for a in q.episodes.artifacts(back)}) == len(cameras)


def _terse_states(bundle: Path, n: int) -> None:
    """``n`` more states, each one object with every default left out."""
    with (bundle / "stream.jsonl").open("a") as f:
        for t in range(21, 21 + n):
            f.write(json.dumps({"tick": t, "type": "state", "objects": [{"id": "a"}]}) + "\n")


# (id, the limit lowered to, edit, message): each counted limit refuses at its number
COUNTED: list[tuple[str, dict[str, int], Edit, str]] = [
    ("lines", {"stream_lines": 12}, lambda b, o: _terse_states(b, 5),
     r"stream\.jsonl: line 13: more than 12 lines; the limit is 12"),
    ("stored-states", {"stream_bytes": 4000}, lambda b, o: _terse_states(b, 40),
     r"stream\.jsonl: line \d+: the states come to [\d,]+ bytes as the project stores them"),
    ("events", {"bundle_entries": 2}, lambda b, o: [_add_line(b, json.dumps(
        {"tick": 50, "type": "event", "id": f"e{k}", "category": "error", "what": "trigger"}
    ).encode()) for k in range(3)], r"stream\.jsonl: line 11: id: event 3; the limit is 2"),
    ("goal", {"bundle_entries": 2}, lambda b, o: _meta(b, goal=[{"text": "x"}] * 3),
     r"episode\.json: goal is 3 entries; the limit is 2"),
    ("videos", {"videos": 2}, lambda b, o: (write_video(b / "v.mp4"), _videos(
        b, *[("v.mp4", f"c{k}") for k in range(3)])),
     r"episode\.json: videos is 3 entries; the limit is 2"),
]  # fmt: skip


@pytest.mark.parametrize(("lowered", "edit", "message"), [c[1:] for c in COUNTED],
                         ids=[c[0] for c in COUNTED])  # fmt: skip
def test_each_counted_limit_refuses_at_its_number(
    world: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    lowered: dict[str, int], edit: Edit, message: str,
) -> None:  # fmt: skip
    bundle, private, _sentinel = world
    edit(bundle, private)
    with Project.create(tmp_path / "p") as p:
        import_bundle(p, bundle)  # within the real limits it imports
    monkeypatch.setattr(reader, "LIMITS", dataclasses.replace(LIMITS, **lowered))
    with Project.create(tmp_path / "q") as q:
        before = _state(q)
        with pytest.raises(UserError, match=message):
            import_bundle(q, bundle)
        assert _state(q) == before


def test_a_failure_while_writing_leaves_the_project_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows go in over several brief transactions; if the last step fails (here: a full
    disk as the videos move into media/), the episode is deleted again and nothing staged
    stays behind."""
    from storage import EpisodeImport

    bundle = write_bundle(tmp_path / "b")
    write_video(bundle / "head.mp4")
    _videos(bundle, ("head.mp4", "head"))

    def full(*_a: object) -> None:
        raise OSError(28, "No space left on device")

    with Project.create(tmp_path / "p") as p:
        import_bundle(p, write_bundle(tmp_path / "other"))
        before = _state(p)
        monkeypatch.setattr(EpisodeImport, "complete", full)
        with pytest.raises(OSError, match="No space"):
            import_bundle(p, bundle)
        assert _state(p) == before
        monkeypatch.undo()
        again = import_episode_bundle(p, bundle)  # and the bundle imports whole afterwards
        assert again.added and len(p.episodes.artifacts(again.episode_id)) == 1
