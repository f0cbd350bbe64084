"""A study bundle from elsewhere cannot exhaust the machine or the project: every member is sized
up from the zip's directory before it is read (size and compression ratio), read bounded all
the same, and its JSON parsed by the guard (depth, UTF-8) and walked for numbers SQLite cannot
hold and texts too long to store. Each refusal is one line naming the bundle, the member and
the field; the project is as it was; a 1.5 GB bomb is refused in little memory."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation import UserError
from storage import Project, import_work, open_assignment
from tests.storage import test_bundles_refusals, test_studies
from tests.storage.hostile import GB, one_line_error, row_counts, workbench
from tests.storage.test_bundles import dump

study_cases = test_studies.study_cases  # the shared session fixture
setup = test_bundles_refusals.setup  # a lead, its assignment bundle and a rater's work bundle
MB = 1 << 20


# ---- making hostile zips ------------------------------------------------------------------------
Member = tuple[str, bytes, int, int, int]  # name, data as stored, crc32, size, method


def deflated(data: bytes) -> Member:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return "", c.compress(data) + c.flush(), zlib.crc32(data), len(data), zipfile.ZIP_DEFLATED


def bomb(head: bytes, filler: bytes, times: int, tail: bytes = b"") -> Member:
    """``head`` + ``filler`` × ``times`` + ``tail`` deflated without ever holding it: the
    filler is compressed once and its (flushed, independent) blocks repeated."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(filler) + c.flush(zlib.Z_FULL_FLUSH)
    last = c.compress(tail) + c.flush()
    crc = zlib.crc32(head)
    for _ in range(times):
        crc = zlib.crc32(filler, crc)
    size = len(head) + len(filler) * times + len(tail)
    return "", first + block * times + last, zlib.crc32(tail, crc), size, zipfile.ZIP_DEFLATED


def write_zip(
    path: Path, members: dict[str, Member], *, claim: dict[str, int] | None = None
) -> Path:
    """A zip of ``members`` written by hand (so a member's data may be any deflate stream and
    its header may ``claim`` any size)."""
    central = b""
    with path.open("wb") as f:
        for name, (_, data, crc, size, method) in members.items():
            said = (claim or {}).get(name, size)
            raw, offset = name.encode(), f.tell()
            fields = (method, 0, 0x21, crc, len(data), said, len(raw))
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, *fields, 0) + raw + data)
            central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, *fields, 0, 0,
                                   0, 0, 0, offset) + raw  # fmt: skip
        start = f.tell()
        f.write(central)
        n = len(members)
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(central), start, 0))
    return path


def members_of(bundle: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(bundle) as z:
        return {n: z.read(n) for n in z.namelist()}


def manifest_for(members: dict[str, bytes], base: bytes, sha: dict[str, str] | None = None
                 ) -> bytes:  # fmt: skip
    """``base``'s manifest with the hashes of ``members`` (``sha`` for those given) and the
    digest redone, as a careful forger would."""
    man = json.loads(base)
    man["files"] = {n: (sha or {}).get(n) or hashlib.sha256(b).hexdigest()
                    for n, b in members.items()}  # fmt: skip
    body = {k: v for k, v in man.items() if k != "digest"}
    man["digest"] = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    return json.dumps(man).encode()


def with_payload(bundle: Path, out: Path, payload: bytes | Callable[[dict[str, Any]], None]
                 ) -> Path:  # fmt: skip
    """``bundle`` with its payload replaced (raw bytes, or the JSON edited), hashes redone."""
    members = members_of(bundle)
    manifest = members.pop("manifest.json")
    if callable(payload):
        data = json.loads(members["payload.json"])
        payload(data)
        payload = json.dumps(data).encode()
    members["payload.json"] = payload
    zipped = {n: deflated(b) for n, b in members.items()}
    zipped["manifest.json"] = deflated(manifest_for(members, manifest))
    return write_zip(out, zipped)


def _huge_frame(d: dict[str, Any]) -> None:
    vid = next(iter(d["videos"]))
    d["videos"][vid]["evidence"] = [{"start_frame": 1, "end_frame": 10**30}]


def _long_note(d: dict[str, Any]) -> None:
    next(iter(d["videos"].values()))["gates"][0]["note"] = "x" * 30_000


# ---- the table ----------------------------------------------------------------------------------
def hostile_work(work: Path, tmp: Path) -> list[tuple[Path, str]]:
    original = members_of(work)["payload.json"]
    deep = json.dumps(json.loads(original) | {"ancestors": "DEEP"}).encode()
    deep = deep.replace(b'"DEEP"', b"[" * 100_000 + b"]" * 100_000)
    padded_manifest = members_of(work)["manifest.json"] + b" " * (100 * MB)
    members = {n: deflated(b) for n, b in members_of(work).items()}
    lying = {**members, "payload.json": deflated(original + b" " * (10 * MB))}
    return [
        (with_payload(work, tmp / "big-payload.wbz", original + b" " * (100 * MB)),
         "payload.json (uncompressed) is 104,8"),
        (with_payload(work, tmp / "ratio.wbz", original + b" " * (10 * MB)),
         "payload.json expands"),
        (with_payload(work, tmp / "deep.wbz", deep), "payload.json is not valid JSON (nested too"),
        (with_payload(work, tmp / "frame.wbz", _huge_frame),
         "payload.json: videos.V-"),  # …evidence.0.end_frame = 1000… is outside
        (with_payload(work, tmp / "note.wbz", _long_note),
         ".gates.0.note is 30,000 characters; the limit is 20,000"),
        (with_payload(work, tmp / "utf8.wbz", b'{"export_id": "\xff\xfe"}'),
         "payload.json is not UTF-8"),
        (write_zip(tmp / "big-manifest.wbz", {**members,
                                               "manifest.json": deflated(padded_manifest)}),
         "manifest.json (uncompressed) is 104,8"),
        (write_zip(tmp / "lying.wbz", lying, claim={"payload.json": 1000}),
         "bundle is truncated or damaged"),
    ]  # fmt: skip


def test_hostile_work_bundles_are_refused_in_one_line_and_change_nothing(
    setup: tuple[Project, Path, Path], tmp_path: Path
) -> None:
    lead, _, work = setup
    before, counts = dump(lead), row_counts(lead.root)
    for bundle, message in hostile_work(work, tmp_path):
        with pytest.raises(UserError) as err:
            import_work(lead, bundle)
        text = str(err.value)
        assert message in text and str(bundle) in text, (bundle.name, text)
        assert "\n" not in text
        if bundle.name == "frame.wbz":
            assert ".evidence.0.end_frame = 1000000000000000000000000000000 is outside" in text
    assert dump(lead) == before and row_counts(lead.root) == counts
    assert import_work(lead, work).added > 0  # the genuine bundle still imports


def test_a_hostile_assignment_bundle_makes_no_rater_project(
    setup: tuple[Project, Path, Path], tmp_path: Path
) -> None:
    _, assignment, _ = setup
    original = members_of(assignment)["payload.json"]
    for name, payload, message in [
        ("big.wbz", original + b" " * (100 * MB), "payload.json (uncompressed) is 104,8"),
        ("deep.wbz", b"[" * 100_000 + b"]" * 100_000, "payload.json is not valid JSON (nested"),
    ]:
        with pytest.raises(UserError, match=re.escape(message)):
            open_assignment(with_payload(assignment, tmp_path / name, payload), tmp_path / "r")
        assert not (tmp_path / "r").exists()


@pytest.fixture
def manifest_bomb(setup: tuple[Project, Path, Path], tmp_path: Path) -> Iterator[Path]:
    """A 1.5 GB manifest (its JSON, then spaces) in a bundle of a few megabytes."""
    _, _, work = setup
    members = {n: deflated(b) for n, b in members_of(work).items()}
    manifest = members_of(work)["manifest.json"]
    members["manifest.json"] = bomb(manifest, b" " * (16 * MB), 96)
    yield write_zip(tmp_path / "bomb.wbz", members)


def test_a_zip_bomb_is_refused_by_its_header_in_little_memory(
    setup: tuple[Project, Path, Path], manifest_bomb: Path
) -> None:
    lead, _, _ = setup
    assert manifest_bomb.stat().st_size < 8 * MB
    counts = row_counts(lead.root)
    ran = workbench("study", "import-work", str(manifest_bomb), "--project", str(lead.root))
    line = one_line_error(ran)
    assert f"{manifest_bomb}: manifest.json (uncompressed) is 1,610,61" in line, line
    assert "the limit is 67,108,864" in line
    assert ran.peak_bytes < GB, f"peak {ran.peak_bytes / MB:.0f} MB"
    assert row_counts(lead.root) == counts
