"""Import of case folders: success, idempotence, all-or-nothing, and one test per bad input."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from storage import CaseImportError, Project, import_cases
from tests.casefactory import make_case, write_video


def snapshot(project: Project) -> tuple[object, ...]:
    """Everything a user could see changed: all rows of all tables, and the media folder."""
    rows = tuple(
        (t, tuple(map(tuple, project.db.execute(f"SELECT * FROM [{t}] ORDER BY 1").fetchall())))
        for t in sorted(project.db.table_names())
    )
    files = tuple(sorted(str(p.relative_to(project.root)) for p in project.media_dir.rglob("*")))
    return rows, files


def test_import_folder_of_cases(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        report = import_cases(p, cases_dir)
        assert sorted(report.cases_added) == ["stack_blocks", "tidy_cups"]
        assert report.videos_added == 3
        videos = p.videos("stack_blocks")
        assert len(videos) == 2
        for v in videos:
            assert v.id.startswith("V-") and "model" not in v.id
            assert p.video_path(v).is_file()
            assert p.video_index(v).frame_count == 12
        case = p.case("tidy_cups")
        assert case.goal == "Put the green cup in the box."
        assert p.media_path(case.initial_image).is_file()


def test_reimport_changes_nothing(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        before = snapshot(p)
        report = import_cases(p, cases_dir)
        assert not report.changed and report.videos_unchanged == 3
        assert snapshot(p) == before


def test_single_case_folder(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        report = import_cases(p, cases_dir / "tidy_cups")
        assert report.cases_added == ["tidy_cups"]


def test_new_video_added_to_existing_case(tmp_path: Path) -> None:
    src = make_case(tmp_path / "src", "c1", n_videos=1)
    with Project.create(tmp_path / "p") as p:
        import_cases(p, src)
        write_video(src / "videos" / "extra.mp4", seed=77)
        data = json.loads((src / "case.json").read_text())
        data["videos"].append({"file": "videos/extra.mp4", "role": "human-success"})
        (src / "case.json").write_text(json.dumps(data))
        report = import_cases(p, src)
        assert report.videos_added == 1 and report.videos_unchanged == 1


# ---- bad input: each names the file and the problem, and leaves the project unchanged ----


def _corrupt_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    mid = len(data) // 3
    data[mid : mid + 400] = bytes(400)
    data[: min(64, len(data))] = bytes(64)  # the container header, so it cannot be opened
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _zero(path: Path) -> None:
    path.write_bytes(b"")


def _text(path: Path) -> None:
    path.write_text("this is not a video\n" * 50)


def _unsupported_codec(path: Path) -> None:
    # A Matroska file whose only stream has a codec id with no decoder in this build.
    import av

    with av.open(str(path), "w", format="matroska") as out:
        s = out.add_stream("ffv1", rate=5)
        s.width, s.height, s.pix_fmt = 16, 16, "yuv420p"
        import numpy as np

        for _ in range(3):
            for pkt in s.encode(av.VideoFrame.from_ndarray(np.zeros((16, 16, 3), np.uint8))):
                out.mux(pkt)
        for pkt in s.encode():
            out.mux(pkt)
    data = path.read_bytes().replace(b"V_FFV1", b"V_ZZZ1")
    path.write_bytes(data)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_corrupt_middle, "gen_0.mp4"),
        (_truncate, "gen_0.mp4"),
        (_zero, "empty"),
        (_text, "gen_0.mp4"),
        (_unsupported_codec, "codec"),
    ],
    ids=["corrupt", "truncated", "zero-byte", "not-a-video", "unsupported-codec"],
)
def test_bad_video_is_refused_and_project_unchanged(
    tmp_path: Path, cases_dir: Path, damage: Callable[[Path], None], message: str
) -> None:
    src = tmp_path / "src"
    shutil.copytree(cases_dir, src)
    damage(src / "tidy_cups" / "videos" / "gen_0.mp4")
    with Project.create(tmp_path / "p") as p:
        import_cases(p, src / "stack_blocks")
        before = snapshot(p)
        with pytest.raises(CaseImportError) as err:
            import_cases(p, src)  # tidy_cups is bad: stack_blocks must not be half-done either
        assert "case.json" in str(err.value) and message in str(err.value)
        assert snapshot(p) == before
        assert not list(p.media_dir.rglob("*.importing"))


def _edit(folder: Path, **changes: object) -> None:
    data = json.loads((folder / "case.json").read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    (folder / "case.json").write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"goal": None}, "field 'goal': missing field"),
        ({"clutter_lvl": "none"}, "field 'clutter_lvl': unknown field"),
        ({"domain": "space"}, "field 'domain'"),
        (
            {"videos": [{"file": "videos/gone.mp4", "role": "human-success"}]},
            "gone.mp4' not found",
        ),
        ({"videos": [{"file": "videos/gen_0.mp4", "role": "generated"}]}, "needs 'model'"),
        ({"initial_image": "nope.png"}, "'nope.png' not found"),
    ],
    ids=["missing-field", "unknown-field", "bad-enum", "missing-media", "no-model", "no-image"],
)
def test_bad_case_file_names_field(
    tmp_path: Path, cases_dir: Path, change: dict[str, object], message: str
) -> None:
    src = tmp_path / "src"
    shutil.copytree(cases_dir / "tidy_cups", src)
    _edit(src, **change)
    with Project.create(tmp_path / "p") as p:
        before = snapshot(p)
        with pytest.raises(CaseImportError) as err:
            import_cases(p, src)
        assert str(src / "case.json") in str(err.value) and message in str(err.value)
        assert snapshot(p) == before


def test_json_syntax_error_names_line(tmp_path: Path, cases_dir: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(cases_dir / "tidy_cups", src)
    (src / "case.json").write_text('{\n  "id": "x",\n  "goal": oops\n}')
    with Project.create(tmp_path / "p") as p, pytest.raises(CaseImportError, match="line 3"):
        import_cases(p, src)


def test_image_that_is_not_an_image(tmp_path: Path, cases_dir: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(cases_dir / "tidy_cups", src)
    (src / "initial.png").write_text("not a png")
    with Project.create(tmp_path / "p") as p:
        before = snapshot(p)
        with pytest.raises(CaseImportError, match=r"initial_image.*initial\.png"):
            import_cases(p, src)
        assert snapshot(p) == before


def test_not_a_case_folder(tmp_path: Path) -> None:
    with (
        Project.create(tmp_path / "p") as p,
        pytest.raises(CaseImportError, match=r"no case\.json"),
    ):
        import_cases(p, tmp_path / "p" / "media")


def test_a_video_stored_without_its_index_gets_one_on_import(
    tmp_path: Path, cases_dir: Path
) -> None:
    """Projects made before episode videos were indexed: the file is there, the index is not."""
    from storage._db import write
    from storage._staging import MediaFile, insert_media
    from storage.media import file_sha256

    video = next((cases_dir / "stack_blocks").rglob("*.mp4"))
    with Project.create(tmp_path / "p") as p:
        with write(p.db):
            insert_media(p, MediaFile(video, file_sha256(video), "video"))  # no index
        import_cases(p, cases_dir)
        for v in p.videos("stack_blocks"):
            assert p.video_index(v).frame_count == 12
