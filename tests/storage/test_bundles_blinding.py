"""Blinding (spec §9.16): nothing a rater sees or sends names a model, seed, file, role or path.

Searched: every value of every table of the rater project, every file name and every byte of
every file in its folder, and every member name and byte of both bundle kinds.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotation import UserError
from storage import (
    BlindingError,
    Project,
    blind_copy,
    export_assignment,
    export_work,
    import_cases,
    open_assignment,
)
from tests.storage import test_studies
from tests.storage.test_studies import CALIBRATION_CASE, DOMAINS, MODELS, SEEDS, annotate

study_cases = test_studies.study_cases  # the shared session fixture
_TOKEN = re.compile(r"[0-9A-Za-z]+")
_LONG_HEX = re.compile(r"^[0-9a-fA-F]{16,}$")


def _rater_texts(root: Path) -> Iterator[tuple[str, str]]:
    """(where, text) for every stored value and every file name of a rater project."""
    with Project.open(root) as p:
        for table in p.db.table_names():
            for row in p.db.execute(f"SELECT * FROM [{table}]").fetchall():
                for value in row:
                    if value is not None:
                        yield f"{table} row", str(value)
    for path in root.rglob("*"):
        yield "file name", str(path.relative_to(root))


def _bundle_texts(bundle: Path) -> Iterator[tuple[str, bytes]]:
    with zipfile.ZipFile(bundle) as z:
        yield f"{bundle.name} comment", z.comment
        for info in z.infolist():
            yield f"{bundle.name} member name", info.filename.encode()
            yield f"{bundle.name} {info.filename}", z.read(info)


def _bare_number_hits(text: str, numbers: list[str]) -> list[str]:
    """Seeds as bare numbers, in any token but long hex strings (hashes, ids)."""
    hits = []
    for tok in _TOKEN.findall(text):
        if _LONG_HEX.match(tok):
            continue
        hits += [n for n in numbers if n in tok]
    return hits


def test_nothing_a_rater_sees_or_sends_unblinds(
    tmp_path: Path, study_cases: Path, request: pytest.FixtureRequest
) -> None:
    lead = Project.create(tmp_path / "lead-secret-folder")
    request.addfinalizer(lead.close)
    import_cases(lead, study_cases)
    st = lead.studies
    st.add_rater("ann", "Ann")
    st.create("pilot", raters_per_video=1)
    calib = lead.videos(CALIBRATION_CASE)[0].id
    st.set_calibration("pilot", {calib: {"task": [3], "physics": [4], "notes": "clean"}})
    st.build_panel("pilot", per_domain=1, seed=1, domains=list(DOMAINS))
    st.assign("pilot", ["ann"], seed=1)
    st.complete_calibration("pilot", "ann", override_reason="checked in person")
    bundle = export_assignment(lead, "pilot", "ann", tmp_path / "ann.wbz").path
    rater_root = tmp_path / "rater"
    open_assignment(bundle, rater_root)
    with Project.open(rater_root) as rp:
        items = rp.studies.assignments("pilot", "ann")
        assert len(items) == 1 + 12
        for a in items[:4]:
            annotate(rp, "ann", a.video_id, [2], [3])
        rp.annotations.add_evidence(items[0].video_id, "ann", start_frame=0, end_frame=2, note="x")
        rp.annotations.set_holistic(items[0].video_id, "ann", task=2, physics=3)
        # no role reaches the rater project (not even a constant one)
        assert {v.role for v in rp.videos()} == {None}
        assert all(v.model is None and v.seed is None for v in rp.videos())
        assert rp.video_truth(items[0].video_id) is None
        work = export_work(rp, tmp_path / "work.wbz").path

    videos = lead.videos()
    needles = [
        *MODELS, "sora", "veo3", "seed_", "secretcase", "human", "scene_secret",
        str(lead.root), str(study_cases), "pytest-of", "lead-secret-folder",
        *(v.source_name for v in videos), *(v.case_id for v in videos),
    ]  # fmt: skip
    texts = list(_rater_texts(rater_root))  # stored values and file names: also bare seeds
    for b in (bundle, work):
        texts += [(w, t.decode("latin-1")) for w, t in _bundle_texts(b) if w.endswith(".json")]
    assert any("Put the red block on the plate" in t for _, t in texts)  # the search sees text
    numbers = [str(s) for s in SEEDS]
    leaks = [(w, n) for w, t in texts for n in _bare_number_hits(t, numbers)]
    # raw bytes too (database pages, WAL, media, every bundle member) for the word needles
    for f in rater_root.rglob("*"):
        if f.is_file():
            texts.append(
                (f"bytes of {f.relative_to(rater_root)}", f.read_bytes().decode("latin-1"))
            )
    for b in (bundle, work):
        texts += [(w, t.decode("latin-1")) for w, t in _bundle_texts(b)]
    leaks += [(w, n) for w, t in texts for n in needles if n.lower() in t.lower()]
    assert not leaks, leaks[:10]
    # the bundles say "generated" nowhere (not even as the rater project's constant role)
    for b in (bundle, work):
        assert not [w for w, t in _bundle_texts(b) if b"generated" in t]


# ---- media metadata (issue 9, item 8) ---------------------------------------------------------
SECRET = "SECRETGEN-7B"
_CONTAINER_TAGS = (
    "title", "comment", "encoder", "artist", "description", "album", "copyright", "software",
    "make", "model", "synopsis", "genre", "location",
)  # fmt: skip
_STREAM_TAGS = ("title", "handler_name", "encoder", "comment", "vendor_id")
_WHEN = "2024-05-06T07:08:09.000000Z"
# What a muxer writes by itself: the library's name, the file brand, neutral handler names.
_MUXER_TAGS = {
    "encoder", "major_brand", "minor_version", "compatible_brands", "handler_name",
    "vendor_id", "language", "duration",
}  # fmt: skip


def write_planted_clip(path: Path, n: int = 10) -> Path:
    """A clip whose every metadata field (container and streams, video and audio) says SECRET,
    with a creation time set everywhere; the frames all differ and there are B-frames."""
    import av
    import numpy as np

    options = {"movflags": "use_metadata_tags"} if path.suffix == ".mp4" else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w", options=options) as out:
        for key in _CONTAINER_TAGS:
            out.metadata[key] = f"{SECRET} {key}"
        out.metadata["creation_time"] = _WHEN
        video = out.add_stream("libx264", rate=12)
        video.width, video.height, video.pix_fmt = 64, 48, "yuv420p"
        video.options = {"crf": "18", "bf": "2", "g": "4"}
        audio = out.add_stream("aac", rate=16000)
        for stream in (video, audio):
            for key in _STREAM_TAGS:
                stream.metadata[key] = f"{SECRET} {key}"
            stream.metadata["language"] = "deu"
            stream.metadata["creation_time"] = _WHEN
        rng = np.random.default_rng(7)
        base = rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)
        for i in range(n):
            img = base.copy()
            img[:, (i * 5) % 64 : (i * 5) % 64 + 4] = 255
            for packet in video.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in video.encode():
            out.mux(packet)
        sound = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), "fltp", "mono")
        sound.sample_rate = 16000
        for packet in [*audio.encode(sound), *audio.encode()]:
            out.mux(packet)
    assert path.read_bytes().count(SECRET.encode()) >= 8  # the planting worked
    return path


def _decoded(path: Path) -> list[tuple[int | None, bytes]]:
    import av

    with av.open(str(path)) as c:
        return [(f.pts, f.to_ndarray(format="yuv420p").tobytes()) for f in c.decode(video=0)]


def _tags(path: Path) -> list[tuple[str, str, str]]:
    """(where, key, value) of every container and stream tag, as ffprobe lists them."""
    import av

    with av.open(str(path)) as c:
        out = [("format", k, v) for k, v in c.metadata.items()]
        for s in c.streams:
            out += [(f"stream {s.index} ({s.type})", k, v) for k, v in s.metadata.items()]
    return out


def _stream_types(path: Path) -> list[str]:
    import av

    with av.open(str(path)) as c:
        return [s.type for s in c.streams]


@pytest.fixture
def planted_lead(tmp_path: Path, request: pytest.FixtureRequest) -> Project:
    """A lead project with one case whose generated videos (MP4 and Matroska) are planted."""
    from tests.casefactory import write_image

    folder = tmp_path / "cases" / "planted"
    write_image(folder / "scene.png")
    videos = []
    for k, ext in enumerate(("mp4", "mkv")):
        name = f"videos/clip_{k}.{ext}"
        write_planted_clip(folder / name)
        videos.append({"file": name, "role": "generated", "model": SECRET, "seed": 11 + k})
    case = {
        "format": "rollout-workbench/case@1", "id": "planted", "domain": "others",
        "goal": "Put the cup on the shelf.", "clutter": "none", "initial_image": "scene.png",
        "videos": videos,
    }  # fmt: skip
    (folder / "case.json").write_text(json.dumps(case))
    lead = Project.create(tmp_path / "lead")
    request.addfinalizer(lead.close)
    import_cases(lead, folder)
    st = lead.studies
    st.add_rater("ann", "Ann")
    st.create("pilot", raters_per_video=1)
    st.add_cases("pilot", ["planted"])
    st.assign("pilot", ["ann"], seed=1)
    return lead


def test_rater_media_carry_no_source_metadata(tmp_path: Path, planted_lead: Project) -> None:
    lead = planted_lead
    bundle = export_assignment(lead, "pilot", "ann", tmp_path / "ann.wbz").path
    needle = SECRET.lower().encode()
    leaks = [w for w, data in _bundle_texts(bundle) if needle in data.lower()]
    assert not leaks, leaks
    rater_root = tmp_path / "rater"
    open_assignment(bundle, rater_root)
    with Project.open(rater_root) as rp:
        rvideos = {v.id: v for v in rp.videos()}
        assert set(rvideos) == {v.id for v in lead.videos()}
        for v in lead.videos():
            rv = rvideos[v.id]
            assert rv.role is None and rv.model is None and rv.seed is None
            theirs, ours = rp.video_path(rv), lead.video_path(v)
            # a new file, addressed by its own sha256 in the rater project's media row
            assert rv.media != v.media
            assert hashlib.sha256(theirs.read_bytes()).hexdigest() == rv.media
            row = rp.db.table("media").get(rv.media)
            assert row["bytes"] == theirs.stat().st_size
            assert row["rel_path"] == f"{rv.media[:2]}/{rv.media}{ours.suffix}"
            # same frames, bit for bit, at the same timestamps; the same frame index
            assert _decoded(theirs) == _decoded(ours)
            a, b = rp.video_index(rv), lead.video_index(v)
            assert (a.frame_count, a.time_base, a.rotation) == (
                b.frame_count,
                b.time_base,
                b.rotation,
            )
            assert a.pts.tolist() == b.pts.tolist()
            assert a.keyframes.tolist() == b.keyframes.tolist()
            assert len(b.keyframes) > 1  # the clip really has several GOPs (and B-frames)
            tags = _tags(theirs)
            assert all(k.lower() in _MUXER_TAGS for _, k, _ in tags), tags
            assert not [t for t in tags if SECRET in t[2] or "creation" in t[1]], tags
            assert {v for _, k, v in tags if k == "handler_name"} <= {"VideoHandler"}, tags
            assert {v for _, k, v in tags if k == "language"} <= {"und"}, tags
            # the video stream alone: an audio track may carry its own tags or a watermark
            assert _stream_types(ours) == ["video", "audio"]
            assert _stream_types(theirs) == ["video"]
        roles = rp.db.execute("SELECT DISTINCT role FROM videos").fetchall()
        assert roles == [("",)]  # the column is required; an empty value says nothing
    for f in rater_root.rglob("*"):
        if f.is_file():
            assert needle not in f.read_bytes().lower(), f


@pytest.mark.skipif(shutil.which("ffprobe") is None, reason="needs the ffprobe CLI")
def test_ffprobe_lists_no_source_tag_in_rater_media(tmp_path: Path, planted_lead: Project) -> None:
    bundle = export_assignment(planted_lead, "pilot", "ann", tmp_path / "ann.wbz").path
    open_assignment(bundle, tmp_path / "rater")
    with Project.open(tmp_path / "rater") as rp:
        paths = [rp.video_path(v) for v in rp.videos()]
    for path in paths:
        cmd = ["ffprobe", "-v", "error", "-of", "json", "-show_format", "-show_streams"]
        info = json.loads(subprocess.run([*cmd, str(path)], capture_output=True).stdout)
        tags = [info["format"].get("tags", {})] + [s.get("tags", {}) for s in info["streams"]]
        assert len(info["streams"]) == 1
        for found in tags:
            assert set(found) <= _MUXER_TAGS | {"DURATION"}, found
            assert SECRET not in json.dumps(found) and "creation_time" not in found


def test_blind_media_are_the_same_bytes_in_every_bundle(
    tmp_path: Path, planted_lead: Project
) -> None:
    """The same source gives the same blind file, so a later bundle brings no second copy."""

    def video_members(bundle: Path) -> dict[str, str]:
        with zipfile.ZipFile(bundle) as z:
            files = json.loads(z.read("manifest.json"))["files"]
        return {k: v for k, v in files.items() if k.startswith("videos/")}

    first = export_assignment(planted_lead, "pilot", "ann", tmp_path / "a.wbz").path
    again = export_assignment(planted_lead, "pilot", "ann", tmp_path / "b.wbz").path
    assert len(video_members(first)) == 2
    assert video_members(first) == video_members(again)
    open_assignment(first, tmp_path / "rater")
    open_assignment(again, tmp_path / "rater")
    with Project.open(tmp_path / "rater") as rp:
        assert rp.db.execute("SELECT COUNT(*) FROM media WHERE kind = 'video'").fetchone() == (2,)


def test_a_video_that_cannot_be_copied_blind_is_refused_by_name(
    tmp_path: Path, planted_lead: Project
) -> None:
    video = planted_lead.videos()[0]
    path = planted_lead.video_path(video)
    data = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(data[: len(data) // 3])  # damaged after import
    out = tmp_path / "ann.wbz"
    with pytest.raises(BlindingError) as err:
        export_assignment(planted_lead, "pilot", "ann", out)
    assert isinstance(err.value, UserError)
    assert path.name in str(err.value) and video.id in str(err.value)
    assert not list(tmp_path.glob("ann.wbz*")) and not list(tmp_path.glob(".wb-blind-*"))


def test_blind_copy_refuses_what_is_not_a_video(tmp_path: Path) -> None:
    src = tmp_path / "notes.mp4"
    src.write_bytes(b"not a video at all" * 100)
    with pytest.raises(BlindingError, match=r"^notes\.mp4: "):
        blind_copy(src, tmp_path / "out.mp4")
    assert not (tmp_path / "out.mp4").exists()
