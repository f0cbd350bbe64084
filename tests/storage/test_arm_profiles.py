"""Arm profiles in the project: files copied by content with their layout, versions that never
change, removal refused while an episode used a version, and failed adds that leave nothing."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from storage import ArmProfileError, Project, StagedArm, files_digest
from storage._db import connect, migrate
from storage._schema import MIGRATIONS

FILES = {
    "lab/arm.xml": b"<mujoco><include file='parts/defaults.xml'/></mujoco>",
    "lab/parts/defaults.xml": b"<mujoco/>",
    "meshes/link1.obj": b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
}


def lab_folder(root: Path, files: dict[str, bytes] = FILES) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def fields(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "source": "/labs/arm.xml", "ee_site": "tcp", "arm_joints": ("j1", "j2"),
        "gripper_actuators": ("grip",), "home": (0.0, 0.5),
        "limits": {"j1": (-1.0, 1.0), "j2": None},
        "gripper_range": {"jaw_gap_cm": [0.0, 8.5]}, "report": {"ok": True, "trials": 3},
    }  # fmt: skip
    return base | over


def add(project: Project, src: Path, name: str = "ur-lab", **over: Any) -> tuple[Any, bool]:
    with project.arms.stage(src, sorted(FILES), "lab/arm.xml") as staged:
        return project.arms.add(staged, name=name, **fields(**over))


def record_episode(project: Project, arm_label: str) -> str:
    return project.episodes.create(
        scenario="stack-two", scenario_sha="0" * 64, family="stack", mode="physics",
        agent="scripted", seed=1, delta=0.1, contract_json="{}", contract_hash="h",
        config={"arm": arm_label},
    )  # fmt: skip


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the project except the database (whose bytes change on open)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith("project.sqlite")
    }


def test_files_are_copied_by_content_with_their_layout(tmp_path: Path) -> None:
    src = lab_folder(tmp_path / "src")
    with Project.create(tmp_path / "p") as project:
        profile, new = add(project, src)
        assert new and profile.label == "ur-lab@1"
        shas = {rel: hashlib.sha256(data).hexdigest() for rel, data in FILES.items()}
        assert profile.files == shas
        assert profile.digest == files_digest(shas)
        folder = project.root / "arms" / profile.digest
        assert profile.folder == f"arms/{profile.digest}"
        assert {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} == set(FILES)
        for rel, data in FILES.items():
            assert (folder / rel).read_bytes() == data
        assert project.arms.mjcf_path(profile) == folder / "lab" / "arm.xml"
        assert [p.name for p in (project.root / "arms").iterdir()] == [profile.digest]  # no temp
        got = project.arms.get("ur-lab")
        assert got == profile and got.arm_joints == ("j1", "j2") and got.home == (0.0, 0.5)
        assert got.limits == {"j1": [-1.0, 1.0], "j2": None}
        assert got.report == {"ok": True, "trials": 3}
        project.arms.verify(got)


def test_the_same_name_again_is_the_next_version_and_the_first_stays(tmp_path: Path) -> None:
    src = lab_folder(tmp_path / "src")
    with Project.create(tmp_path / "p") as project:
        v1, _ = add(project, src)
        same, new = add(project, src)
        assert (same, new) == (v1, False)  # nothing changed: no new version
        (src / "meshes" / "link1.obj").write_bytes(b"v 0 0 0\nv 2 0 0\nv 0 2 0\nf 1 2 3\n")
        v2, new = add(project, src)
        assert new and v2.label == "ur-lab@2" and v2.digest != v1.digest
        renamed, new = add(project, src, ee_site="tool0")  # same files, other names
        assert new and renamed.version == 3 and renamed.digest == v2.digest
        assert project.arms.get("ur-lab") == renamed
        assert project.arms.get("ur-lab@1") == v1
        project.arms.verify(v1)  # the first version's files are untouched
        assert (project.root / v1.folder / "meshes" / "link1.obj").read_bytes() == FILES[
            "meshes/link1.obj"
        ]
        assert [p.label for p in project.arms.list()] == ["ur-lab@1", "ur-lab@2", "ur-lab@3"]
        with pytest.raises(ArmProfileError, match=r"has no version 7 \(ur-lab@1, ur-lab@2"):
            project.arms.get("ur-lab@7")
        with pytest.raises(ArmProfileError, match=r"no arm profile 'other' .*\(ur-lab\)"):
            project.arms.get("other")


def test_a_version_is_never_changed_and_a_used_one_is_never_removed(tmp_path: Path) -> None:
    src = lab_folder(tmp_path / "src")
    with Project.create(tmp_path / "p") as project:
        v1, _ = add(project, src)
        with pytest.raises(sqlite3.IntegrityError, match="never changed"):
            project.db.execute("UPDATE arm_profiles SET ee_site = 'x' WHERE name = 'ur-lab'")
        eid = record_episode(project, "ur-lab@1")
        with pytest.raises(ArmProfileError, match=rf"ur-lab@1 by 1 episode\(s\) \({eid[:8]}\)"):
            project.arms.remove("ur-lab")
        assert project.arms.get("ur-lab@1") == v1
        assert (project.root / v1.folder).is_dir()
        # an unused version goes, with its files; the used one and its files stay
        (src / "lab" / "parts" / "defaults.xml").write_bytes(b"<mujoco><!-- v2 --></mujoco>")
        v2, _ = add(project, src)
        assert project.arms.users([v1, v2]) == {"ur-lab@1": [eid], "ur-lab@2": []}
        assert project.arms.remove("ur-lab@2") == [v2]
        assert not (project.root / v2.folder).exists()
        assert [p.label for p in project.arms.list()] == ["ur-lab@1"]
        project.arms.verify(v1)
        project.episodes.delete(eid)
        assert project.arms.remove("ur-lab") == [v1]
        assert project.arms.list() == [] and not (project.root / v1.folder).exists()


def test_versions_with_the_same_files_share_them_until_the_last_goes(tmp_path: Path) -> None:
    src = lab_folder(tmp_path / "src")
    with Project.create(tmp_path / "p") as project:
        a, _ = add(project, src, name="arm-a")
        b, _ = add(project, src, name="arm-b")
        assert a.folder == b.folder
        project.arms.remove("arm-a")
        project.arms.verify(b)
        project.arms.remove("arm-b")
        assert not (project.root / a.folder).exists()


def test_an_edited_copy_is_detected_by_name(tmp_path: Path) -> None:
    src = lab_folder(tmp_path / "src")
    with Project.create(tmp_path / "p") as project:
        v1, _ = add(project, src)
        mesh = project.root / v1.folder / "meshes" / "link1.obj"
        mesh.write_bytes(b"v 9 9 9\n")
        with pytest.raises(ArmProfileError, match=rf"ur-lab@1: {mesh} changed since the profile"):
            project.arms.verify(v1)
        mesh.unlink()
        with pytest.raises(ArmProfileError, match=rf"{mesh} is missing"):
            project.arms.verify(v1)
        # adding the same files again puts the recorded bytes back (the folder is their digest)
        again, new = add(project, src)
        assert not new and again == v1
        project.arms.verify(v1)


@pytest.mark.parametrize(
    "what",
    ["missing file", "file outside", "bad name", "versioned name", "not json", "rename fails"],
)
def test_a_failed_add_leaves_the_project_as_it_was(
    tmp_path: Path, what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = lab_folder(tmp_path / "src")
    with Project.create(tmp_path / "p") as project:
        add(project, src, name="kept")
        before = snapshot(project.root)
        rows = project.arms.list()
        (src / "meshes" / "link1.obj").write_bytes(b"changed")  # a new version's files
        files, name, over = sorted(FILES), "ur-lab", {}
        if what == "missing file":
            files = [*files, "meshes/link2.obj"]
        elif what == "file outside":
            files = [*files, "../etc/passwd"]
        elif what == "bad name":
            name = "no spaces"
        elif what == "versioned name":
            name = "ur-lab@2"
        elif what == "not json":
            over = {"report": {"ok": float("nan")}}
        else:

            def broken(a: object, b: object) -> None:
                raise OSError(28, "No space left on device")

            monkeypatch.setattr(os, "rename", broken)
        with (
            pytest.raises((ArmProfileError, OSError)),
            project.arms.stage(src, files, "lab/arm.xml") as staged,
        ):
            project.arms.add(staged, name=name, **fields(**over))
        monkeypatch.undo()
        assert project.arms.list() == rows
        assert snapshot(project.root) == before
        assert [p.name for p in (project.root / "arms").iterdir()] == [rows[0].digest]


def test_the_staged_folder_is_what_the_check_runs_on(tmp_path: Path) -> None:
    src = lab_folder(tmp_path / "src")
    with Project.create(tmp_path / "p") as project:
        with project.arms.stage(src, sorted(FILES), "lab/arm.xml") as staged:
            assert isinstance(staged, StagedArm)
            assert staged.mjcf.read_bytes() == FILES["lab/arm.xml"]
            assert staged.root.parent == project.root / "arms" and staged.root.name[0] == "."
        assert not staged.root.exists()  # not added: gone


def test_a_v9_project_gains_the_table(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:9], root / "project.sqlite")
    db.close()
    with Project.open(root) as project:
        assert project.db.table("meta").get("schema_version")["value"] == str(len(MIGRATIONS))
        assert project.arms.list() == []
