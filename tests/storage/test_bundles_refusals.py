"""Bad bundles are refused with a message naming the file, and change nothing."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from storage import (
    BundleError,
    Project,
    StudyError,
    export_assignment,
    export_work,
    import_cases,
    import_work,
    open_assignment,
)
from tests.storage import test_studies
from tests.storage.test_bundles import dump
from tests.storage.test_studies import DOMAINS, annotate

study_cases = test_studies.study_cases  # the shared session fixture
FORMAT_2 = "rollout-workbench/bundle@2"


def rewrite(
    src: Path,
    dst: Path,
    *,
    manifest: Callable[[dict[str, Any]], None] | None = None,
    payload: Callable[[dict[str, Any]], None] | None = None,
    rehash: bool = True,
) -> Path:
    """Copy a bundle, editing its payload and/or manifest; ``rehash`` fixes hashes and digest
    (as a newer workbench, or a careful forger, would)."""
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    man = json.loads(members.pop("manifest.json"))
    if payload:
        data = json.loads(members["payload.json"])
        payload(data)
        members["payload.json"] = json.dumps(data).encode()
    if manifest:
        manifest(man)
    if rehash:
        man["files"] = {n: hashlib.sha256(b).hexdigest() for n, b in members.items()}
        body = {k: v for k, v in man.items() if k != "digest"}
        man["digest"] = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    with zipfile.ZipFile(dst, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
        z.writestr("manifest.json", json.dumps(man))
    return dst


@pytest.fixture
def setup(tmp_path: Path, study_cases: Path) -> Iterator[tuple[Project, Path, Path]]:
    """A lead with one rater (no calibration), its assignment bundle and a work bundle."""
    lead = Project.create(tmp_path / "lead")
    import_cases(lead, study_cases)
    lead.studies.add_rater("ann")
    lead.studies.add_rater("zed")
    lead.studies.create("pilot", raters_per_video=1)
    lead.studies.build_panel("pilot", per_domain=1, seed=1, domains=[DOMAINS[0]])
    lead.studies.assign("pilot", ["ann"], seed=1)
    a = export_assignment(lead, "pilot", "ann", tmp_path / "assignment.wbz").path
    open_assignment(a, tmp_path / "rater")
    with Project.open(tmp_path / "rater") as rp:
        for item in rp.studies.assignments("pilot", "ann")[:2]:
            annotate(rp, "ann", item.video_id, [2], [3])
        w = export_work(rp, tmp_path / "work.wbz").path
    yield lead, a, w
    lead.close()


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda d: d.__setitem__(key, value)


def test_bad_work_bundles_are_refused_and_change_nothing(
    setup: tuple[Project, Path, Path], tmp_path: Path
) -> None:
    lead, assignment, work = setup
    truncated = tmp_path / "truncated.wbz"
    truncated.write_bytes(work.read_bytes()[: work.stat().st_size // 2])
    not_zip = tmp_path / "notes.wbz"
    not_zip.write_text("just some text")

    def add_video(d: dict[str, Any]) -> None:
        d["videos"]["V-00000000"] = next(iter(d["videos"].values()))

    def change_answer(d: dict[str, Any]) -> None:
        next(iter(d["videos"].values()))["gates"][0]["answer"] = "fail"

    cases = [
        (truncated, "is truncated or damaged"),
        (not_zip, "is truncated or damaged"),
        (tmp_path / "missing.wbz", "no such bundle file"),
        (rewrite(work, tmp_path / "t1.wbz", payload=change_answer, rehash=False),
         "has been modified since it was exported (payload.json differs)"),
        (rewrite(work, tmp_path / "t2.wbz", manifest=_set("rater_id", "zed"), rehash=False),
         "modified since it was exported (manifest.json edited)"),
        (rewrite(work, tmp_path / "newer.wbz", manifest=_set("schema_version", 99)),
         "made by a newer workbench (schema v99"),
        (rewrite(work, tmp_path / "fmt2.wbz", manifest=_set("format", FORMAT_2)),
         "made by a newer workbench (bundle format"),
        (rewrite(work, tmp_path / "other.wbz", manifest=_set("format", "zip-of-stuff/1")),
         "not a workbench bundle"),
        (rewrite(work, tmp_path / "foreign.wbz", manifest=_set("project_id", "0" * 32)),
         "belongs to another project (00000000"),
        (rewrite(work, tmp_path / "zed.wbz", manifest=_set("rater_id", "zed")),
         "rater 'zed' has no assignment in study 'pilot'"),
        (rewrite(work, tmp_path / "nostudy.wbz", manifest=_set("study_id", "main")),
         "study 'main' is not in this project"),
        (rewrite(work, tmp_path / "extra.wbz", payload=add_video),
         "V-00000000, which is not assigned to ann"),
        (assignment, "this is an assignment bundle, not a work bundle"),
    ]  # fmt: skip
    before = dump(lead)
    for path, message in cases:
        with pytest.raises(BundleError) as err:
            import_work(lead, path)
        assert message in str(err.value), (path.name, str(err.value))
        assert str(path) in str(err.value)  # the message names the file
    assert dump(lead) == before
    assert import_work(lead, work).added > 0  # the genuine bundle still imports


def test_work_bundle_from_another_project_is_refused(
    setup: tuple[Project, Path, Path], tmp_path: Path, study_cases: Path
) -> None:
    _, _, work = setup
    with Project.create(tmp_path / "other-lead") as other:  # same cases, study and rater
        import_cases(other, study_cases)
        other.studies.add_rater("ann")
        other.studies.create("pilot", raters_per_video=1)
        other.studies.build_panel("pilot", per_domain=1, seed=1, domains=[DOMAINS[0]])
        other.studies.assign("pilot", ["ann"], seed=1)
        with pytest.raises(BundleError, match=r"work\.wbz: belongs to another project"):
            import_work(other, work)


def test_bad_assignment_bundles_and_folders(
    setup: tuple[Project, Path, Path], tmp_path: Path
) -> None:
    lead, assignment, work = setup
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with pytest.raises(BundleError, match="folder is not empty"):
        open_assignment(assignment, busy)
    assert [p.name for p in busy.iterdir()] == ["notes.txt"]
    with pytest.raises(BundleError, match="not an assignment bundle"):
        open_assignment(work, tmp_path / "fresh")
    assert not (tmp_path / "fresh").exists()
    newer = rewrite(assignment, tmp_path / "newer.wbz", manifest=_set("schema_version", 99))
    with pytest.raises(BundleError, match="schema v99"):
        open_assignment(newer, tmp_path / "fresh")
    assert not (tmp_path / "fresh").exists()  # a failed open leaves no half-made project
    # another rater's (or another study's) bundle cannot go into this rater's folder
    lead.studies.create("second", raters_per_video=1)
    lead.studies.build_panel("second", per_domain=1, seed=2, domains=[DOMAINS[1]])
    lead.studies.assign("second", ["ann"], seed=1)
    other = export_assignment(lead, "second", "ann", tmp_path / "second.wbz").path
    with pytest.raises(BundleError, match="is not the rater project of ann in study second"):
        open_assignment(other, tmp_path / "rater")
    # the lead's own project is not a rater project; export-work and import-work say so
    with pytest.raises(BundleError, match="not a rater project"):
        export_work(lead, tmp_path / "w.wbz")
    with Project.open(tmp_path / "rater") as rp:
        with pytest.raises(BundleError, match="is a rater project"):
            import_work(rp, work)
        with pytest.raises(StudyError, match="is a rater project"):
            export_assignment(rp, "pilot", "ann", tmp_path / "x.wbz")
        video = rp.studies.assignments("pilot", "ann")[0]
        annotate(rp, "someone-else", video.video_id, [1], [1])
        with pytest.raises(StudyError, match="set WB_RATER=ann"):
            export_work(rp, tmp_path / "w.wbz")


def test_unassigned_rater_and_locked_production(
    setup: tuple[Project, Path, Path], tmp_path: Path
) -> None:
    lead, _, _ = setup
    with pytest.raises(StudyError, match="'zed' has no assignments"):
        export_assignment(lead, "pilot", "zed", tmp_path / "zed.wbz")
    with pytest.raises(StudyError, match="no rater 'nobody'"):
        export_assignment(lead, "pilot", "nobody", tmp_path / "nobody.wbz")
    assert not (tmp_path / "zed.wbz").exists() and not list(tmp_path.glob("*.partial"))
