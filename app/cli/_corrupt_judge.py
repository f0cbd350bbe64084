"""The judge half of ``workbench corrupt-bench``: the corrupted set judged with and without the
continuity scan's windows (Ego2Act §8.2's judge detection).

The set goes into the project as ordinary cases (one per source clip, its four versions as
generated videos, f₁ the source's own first frame), the scans the bench evaluates are the
project's stored ones (so the windows a judge is offered are the windows the report counts),
and two batches are queued over the same videos: ``continuity_windows`` 0 and N. The command
then runs them with the ``worker --drain`` entry, so the per-video spend cap, retries and the
audit trail are the queue's own.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from annotation import UserError
from storage import Project

DEFAULT_GOAL = "Complete the task shown."
DEFAULT_WINDOWS = 3
# File name and "model" of each version in its case; the control is named for what it is.
LABELS = {"teleport": "teleport", "swap": "swap", "ghost": "ghost", "none": "reencode"}


class CorruptBenchError(UserError, ValueError):
    """The project cannot host the bench's judge runs now; the message says why."""


@dataclass(frozen=True)
class BenchVideo:
    """One clip of the corrupted set, as imported."""

    corruption: Any  # sim.synthetic.Corruption
    case_id: str
    video_id: str
    sha256: str


@dataclass(frozen=True)
class Batches:
    without_scan: str
    with_scan: str
    windows: int


def check_project(project: Project, profile: str) -> None:
    """Refuse before anything is written: a missing profile (as ``judge run`` would), or judge
    jobs of other batches waiting, which a drain here would run and pay for too."""
    from judge import JUDGE_KIND
    from storage import JobStatus

    project.profiles.get(profile)  # ProfileNotFoundError (a UserError) names it
    busy = [j for s in (JobStatus.QUEUED, JobStatus.RUNNING)
            for j in project.jobs.query(status=s) if j.kind == JUDGE_KIND]  # fmt: skip
    if busy:
        names = sorted({j.batch or "(no batch)" for j in busy})
        raise CorruptBenchError(
            f"{project.root} has {len(busy)} judge job(s) queued or running (batch "
            f"{', '.join(names[:3])}); corrupt-bench would run them too: let them finish "
            "(`workbench worker --drain`) or cancel them (`workbench jobs cancel`) first"
        )


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _case_id(source: Path, sha: str) -> str:
    # the content's hash, not the folder's position: the same clip always lands in the same
    # case (a re-run adds nothing), and two clips both called human_success_1 never collide
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", source.stem).strip("._-") or "clip"
    return f"corrupt-{stem[:60]}-{sha[:8]}"


def _first_frame_png(video: Path, out: Path) -> None:
    """f₁ is the source's own first frame, decoded exactly (as the MuJoCo demo cases do):
    brought down to 512 px like theirs, but never blown up (that would only invent pixels)."""
    from sim.synthetic import write_png
    from storage.media import FrameReader, index_video

    with FrameReader(video, index_video(video)) as reader:
        frame = reader.read(0)
    write_png(frame, out, longest=512 if max(frame.shape[:2]) > 512 else None)


def write_cases(corruptions: Sequence[Any], folder: Path, goal: str) -> dict[str, str]:
    """One case folder per source clip under ``folder`` (docs/case-format.md); returns the case
    id of each source."""
    case_of: dict[str, str] = {}
    by_source: dict[str, list[Any]] = {}
    for c in corruptions:
        by_source.setdefault(c.source, []).append(c)
    for source, versions in by_source.items():
        src = Path(source)
        case_id = case_of[source] = _case_id(src, _sha256(src))
        case = folder / case_id
        (case / "videos").mkdir(parents=True, exist_ok=True)
        _first_frame_png(src, case / "initial.png")
        videos, edits = [], []
        for c in versions:
            label = LABELS[c.kind]
            shutil.copyfile(c.output, case / "videos" / f"{label}.mp4")
            videos.append({"file": f"videos/{label}.mp4", "role": "generated", "model": label})
            if c.kind != "none":
                edits.append(f"{c.kind} {c.start_s:.3f}–{c.end_s:.3f} s")
        doc = {
            "id": case_id,
            "goal": goal,
            "domain": "others",  # not known for an arbitrary clip; nothing is scored by it
            "clutter": "minimal",
            "initial_image": "initial.png",
            "videos": videos,
            "notes": f"workbench corrupt-bench set of {src.name} (Ego2Act §8.2): "
            f"{'; '.join(edits) or 'no edit fitted'}; reencode is the unedited control.",
        }
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        (case / "case.json").write_text(text, encoding="utf-8")
    return case_of


def import_set(project: Project, corruptions: Sequence[Any], folder: Path,
               goal: str) -> list[BenchVideo]:  # fmt: skip
    """Import the set as cases (their folders under ``folder/cases``) and find each clip's
    video; every clip gets a stored scan (the import makes those of short clips; the rest are
    made here)."""
    from storage import import_cases
    from storage.media.continuity import scan_video

    if not corruptions:
        raise CorruptBenchError("no clip to judge: every clip is shorter than the 0.5 s even "
                                "a re-encode needs")  # fmt: skip
    case_of = write_cases(corruptions, folder / "cases", goal)
    import_cases(project, folder / "cases")
    out = []
    for c in corruptions:
        case_id = case_of[c.source]
        sha = _sha256(Path(c.output))
        (video,) = [v for v in project.videos(case_id) if v.media == sha]
        if project.continuity.get(sha) is None:
            project.continuity.save(sha, scan_video(project.media_path(sha)))
        out.append(BenchVideo(c, case_id, video.id, sha))
    return out


def project_trials(project: Project, videos: Sequence[BenchVideo]) -> list[Any]:
    from storage.media.continuity import Trial

    out = []
    for v in videos:
        scan = project.continuity.get(v.sha256)
        assert scan is not None  # import_set stored one for every clip
        c = v.corruption
        out.append(Trial(c.source, c.kind, c.start_s, c.end_s, scan.windows))
    return out


def queue_batches(project: Project, videos: Sequence[BenchVideo], profile: str,
                  windows: int) -> Batches:  # fmt: skip
    from judge import queue_judge

    stamp = f"{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    names = Batches(f"corrupt-bench-{stamp}-without-scan", f"corrupt-bench-{stamp}-with-scan",
                    windows)  # fmt: skip
    ids = [v.video_id for v in videos]
    for name, n in ((names.without_scan, 0), (names.with_scan, windows)):
        queue_judge(project, ids, profile=profile, batch=name, config={"continuity_windows": n})
    return names


def _batch_report(project: Project, videos: Sequence[BenchVideo], batch: str,
                  windows: int) -> dict[str, Any]:  # fmt: skip
    from storage import JobStatus, JudgeRuns
    from storage.media.continuity import JudgeScore, judge_detection

    jobs = project.jobs.query(batch=batch)
    job_ids = {j.id for j in jobs}
    runs = JudgeRuns(project.db)
    p100: dict[str, float | None] = {}
    for j in jobs:
        vid = str(j.payload["video_id"])
        done = [r for r in runs.runs(vid) if r.job_id in job_ids and r.status == "done"]
        p100[vid] = done[-1].p100 if done else None
    kind_of = {v.video_id: v.corruption.kind for v in videos}
    scores = [JudgeScore(v.corruption.source, v.corruption.kind, p100.get(v.video_id))
              for v in videos]  # fmt: skip
    return judge_detection(scores) | {
        "batch": batch,
        "continuity_windows": windows,
        # as `judge status` counts it: every recorded call of every attempt
        "cost_usd": round(project.jobs.spend(batch=batch), 6),
        "calls": sum(j.calls for j in jobs),
        "jobs": {s.value: sum(1 for j in jobs if j.status is s) for s in JobStatus},
        "failed": [_failure(j, kind_of) for j in jobs if j.status is JobStatus.FAILED],
    }


def _failure(job: Any, kind_of: dict[str, str]) -> dict[str, Any]:
    vid = str(job.payload.get("video_id"))
    return {"video_id": vid, "kind": kind_of.get(vid), "error": job.error}


def judge_report(project: Project, videos: Sequence[BenchVideo], batches: Batches,
                 profile: str, goal: str) -> dict[str, Any]:  # fmt: skip
    return {
        "profile": profile,
        "goal": goal,
        "cases": sorted({v.case_id for v in videos}),
        "without_scan": _batch_report(project, videos, batches.without_scan, 0),
        "with_scan": _batch_report(project, videos, batches.with_scan, batches.windows),
    }


def _cell(e: dict[str, Any]) -> str:
    if e["rate"] is None:
        return f"– (0 scored, {e['left_out']} left out)"
    ci = "" if e["ci95"] is None else f" ({e['ci95'][0]:.0%} – {e['ci95'][1]:.0%})"
    out = f", {e['left_out']} left out" if e["left_out"] else ""
    return f"{e['rate']:.0%}{ci}  n {e['n']}{out}"


def print_judge_table(judge: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    off, on = judge["without_scan"], judge["with_scan"]
    table = Table(title=f"judge ({judge['profile']}): detected when P100 is below its re-encode's")
    table.add_column("")
    table.add_column("without scan")
    table.add_column(f"with scan ({on['continuity_windows']} windows)")
    for kind in ("teleport", "swap", "ghost"):
        table.add_row(f"{kind} detected", _cell(off[kind]), _cell(on[kind]))
    table.add_row("controls scored", *(f"{b['controls_scored']} of {b['controls']}"
                                       for b in (off, on)))  # fmt: skip
    table.add_row("spent", *(f"${b['cost_usd']:.4f} on {b['calls']} call(s)" for b in (off, on)))
    table.add_row("failed jobs", *(str(len(b["failed"])) for b in (off, on)))
    Console().print(table)
    for b in (off, on):
        for f in b["failed"]:
            Console(stderr=True).print(f"  {b['batch']}: {f['kind']} {f['video_id']}: {f['error']}")
