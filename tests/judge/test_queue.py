"""Queueing judge jobs: one per video, one batch, refused as a whole on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge import JUDGE_KIND, ModelProfile, QueueError, queue_judge, save_profile
from storage import JobStatus, Project, import_cases


def with_profile(p: Project) -> None:
    save_profile(
        p.profiles, ModelProfile(name="local", base_url="http://127.0.0.1:9/v1", model="m")
    )


def test_queue_one_job_per_video_in_a_batch(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        with_profile(p)
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
        with_profile(p)
        chosen = videos if videos is not None else [p.videos()[0].id]
        with pytest.raises(QueueError, match=message):
            queue_judge(p, chosen, profile="local", mode=mode)
        assert p.jobs.query() == []


def test_unknown_profile_queues_nothing(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        with pytest.raises(QueueError, match="no model profile 'typo'"):
            queue_judge(p, [p.videos()[0].id], profile="typo")
        assert p.jobs.query() == []
