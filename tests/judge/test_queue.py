"""Queueing judge jobs: one per video, one batch, refused as a whole on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge import JUDGE_KIND, QueueError, queue_judge
from storage import JobStatus, Project, import_cases


def test_queue_one_job_per_video_in_a_batch(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        videos = [v.id for v in p.videos()]
        batch, ids = queue_judge(p, videos + videos[:1], profile="local", mode="independent")
        assert len(ids) == len(videos)  # duplicates collapse
        jobs = p.jobs.query(batch=batch)
        assert {j.kind for j in jobs} == {JUDGE_KIND}
        assert {j.payload["video_id"] for j in jobs} == set(videos)
        assert all(
            j.status is JobStatus.QUEUED and j.payload["mode"] == "independent" for j in jobs
        )


@pytest.mark.parametrize(
    ("videos", "mode", "message"),
    [
        ([], "gated", "no videos"),
        (["V-NOPE"], "gated", "V-NOPE"),
        (None, "fancy", "unknown judge mode"),
    ],
)
def test_bad_requests_queue_nothing(
    tmp_path: Path, cases_dir: Path, videos: list[str] | None, mode: str, message: str
) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        chosen = videos if videos is not None else [p.videos()[0].id]
        with pytest.raises(QueueError, match=message):
            queue_judge(p, chosen, profile="local", mode=mode)
        assert p.jobs.query() == []
