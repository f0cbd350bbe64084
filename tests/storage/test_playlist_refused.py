"""A video is one file (issue 27): a case video that is an HLS playlist was indexed from a
``.ts`` outside the case folder while the project stored only the playlist. Playlists and
concat lists are refused by suffix, by content and by the demuxer FFmpeg picks, at import and
wherever a video is opened, with a message naming the file and the field."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from storage import CaseImportError, Project, import_cases
from storage.media import MediaError, check_video_container, index_video
from tests.casefactory import make_case, write_video
from tests.storage.test_import import snapshot


def _hls(folder: Path, name: str, segment: Path) -> str:
    (folder / name).write_text(
        f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n{segment}\n#EXT-X-ENDLIST\n"
    )
    return name


def _concat(folder: Path, name: str, _segment: Path) -> str:
    write_video(folder / "part.mp4", seed=3)  # inside the folder: FFmpeg would play the list
    (folder / name).write_text("ffconcat version 1.0\nfile part.mp4\n")
    return name


def _bom_hls(folder: Path, name: str, segment: Path) -> str:
    (folder / name).write_bytes(b"\xef\xbb\xbf\n  " + (folder / _hls(folder, "x.m3u8", segment))
                                .read_bytes())  # fmt: skip
    return name


def _dash(folder: Path, name: str, _segment: Path) -> str:
    (folder / name).write_text('<?xml version="1.0"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:'
                               '2011" type="static"></MPD>\n')  # fmt: skip
    return name


Make = Callable[[Path, str, Path], str]
LISTS: list[tuple[str, Make, str, str]] = [
    ("hls", _hls, "clip.m3u8", "an HLS playlist"),
    ("hls-named-mp4", _hls, "clip.mp4", "an HLS playlist"),
    ("hls-after-bom", _bom_hls, "clip.mov", "an HLS playlist"),
    ("m3u", _hls, "clip.m3u", "a playlist"),
    ("ffconcat", _concat, "clip.ffconcat", "an FFmpeg concat list"),
    ("concat-txt", _concat, "clip.txt", "a text file"),
    ("concat-named-mkv", _concat, "clip.mkv", "an FFmpeg concat list"),
    ("dash", _dash, "clip.mpd", "a DASH manifest"),
    ("dash-named-mp4", _dash, "clip.mp4", "a DASH manifest"),
]


@pytest.mark.parametrize(("make", "name", "what"), [x[1:] for x in LISTS],
                         ids=[x[0] for x in LISTS])  # fmt: skip
def test_a_case_video_that_is_a_list_is_refused(
    tmp_path: Path, make: Make, name: str, what: str
) -> None:
    outside = write_video(tmp_path / "outside" / "seg.ts", n=30, seed=9)
    case = make_case(tmp_path / "cases", "c1", n_videos=1)
    make(case / "videos", name, outside)
    spec = json.loads((case / "case.json").read_text())
    spec["videos"][0]["file"] = f"videos/{name}"
    (case / "case.json").write_text(json.dumps(spec))
    with Project.create(tmp_path / "p") as p:
        import_cases(p, make_case(tmp_path / "first", "c0", n_videos=1))  # something already in
        before = snapshot(p)
        with pytest.raises(CaseImportError) as err:
            import_cases(p, case)
        assert snapshot(p) == before
    text = str(err.value)
    assert "\n" not in text
    assert f"case.json: videos.0: {name}: is {what}, not a video file" in text
    assert sorted(x.name for x in outside.parent.iterdir()) == ["seg.ts"]


@pytest.mark.parametrize(("make", "name", "what"), [x[1:] for x in LISTS[:3]],
                         ids=[x[0] for x in LISTS[:3]])  # fmt: skip
def test_no_reader_follows_a_list_either(tmp_path: Path, make: Make, name: str, what: str) -> None:
    """open_video itself refuses, so a list that got into a project some other way (an older
    version stored it) is never played from the files it names."""
    outside = write_video(tmp_path / "seg.ts", n=30)
    folder = tmp_path / "f"
    folder.mkdir()
    with pytest.raises(MediaError, match=f"is {what}, not a video file"):
        index_video(folder / make(folder, name, outside))


def test_the_demuxer_ffmpeg_picks_is_checked_too(tmp_path: Path) -> None:
    clip = write_video(tmp_path / "clip.mp4")
    check_video_container(clip)  # a real file passes, by suffix and content
    check_video_container(clip, "mov,mp4,m4a,3gp,3g2,mj2")
    demuxers = [("hls", "an HLS playlist"), ("applehttp", "an HLS playlist"),
                ("concat", "an FFmpeg concat list"), ("dash", "a DASH manifest")]  # fmt: skip
    for demuxer, what in demuxers:
        with pytest.raises(MediaError, match=f"clip.mp4: is {what}"):
            check_video_container(clip, demuxer)
    assert index_video(clip).frame_count == 12


def test_a_real_video_named_like_nothing_special_still_imports(tmp_path: Path) -> None:
    case = make_case(tmp_path / "cases", "c1", n_videos=1)
    shutil.move(case / "videos" / "gen_0.mp4", case / "videos" / "gen_0.mkv.mp4")
    spec = json.loads((case / "case.json").read_text())
    spec["videos"][0]["file"] = "videos/gen_0.mkv.mp4"
    (case / "case.json").write_text(json.dumps(spec))
    with Project.create(tmp_path / "p") as p:
        assert import_cases(p, case).videos_added == 1
