"""Blinding (spec §9.16): nothing a rater sees or sends names a model, seed, file, role or path.

Searched: every value of every table of the rater project, every file name and every byte of
every file in its folder, and every member name and byte of both bundle kinds.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage import (
    Project,
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
        # the only role stored is a constant (the column is required): it carries no signal
        roles = {v.role.value for v in rp.videos()}
        assert roles == {"generated"}
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
