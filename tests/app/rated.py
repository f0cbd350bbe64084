"""A small project rated by several raters and judged once per video (GUI tests' content)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from annotation import GATES_ALL, PHYSICS_GATES, TASK_GATES, Answer
from judge import ModelProfile, queue_judge, save_profile
from judge.models.loopback import FakeServer
from judge.video.loopback import wire_responder
from storage import Project, run_worker


def rate(p: Project, rater: str, video_id: str, fails_at: str | None) -> None:
    """One subgoal, every gate yes until ``fails_at`` (which is answered no); the walk of that
    axis ends there, and Physics is answered (all yes) unless t = 0."""
    assert fails_at is None or fails_at in GATES_ALL
    v = p.video(video_id)
    plan = p.annotations.plan(v.case_id, rater)
    sg = plan[0] if plan else p.annotations.add_subgoal(v.case_id, rater, source="x", action="y")
    for axis in (TASK_GATES, PHYSICS_GATES):
        for gate in axis:
            if gate.startswith("P") and fails_at == "T1":
                return  # t = 0: physics is unattempted
            answer = Answer.FAIL if gate == fails_at else Answer.PASS
            p.annotations.set_answer(video_id, rater, sg.id, gate, answer)
            if gate == fails_at:
                break


def rate_and_judge(project_dir: Path, fails: Mapping[str, Sequence[str | None]]) -> Path:
    """Rater ``r`` answers video k failing at ``fails[r][k % len]``; then every video is judged
    once through the loopback endpoint by a real worker."""
    with FakeServer(wire_responder()) as srv, Project.open(project_dir) as p:
        save_profile(
            p.profiles,
            ModelProfile(name="loop", base_url=srv.base_url, model="fake-vlm", api_key_env=""),
        )
        videos = [v.id for v in p.videos()]
        for k, vid in enumerate(videos):
            for rater, pattern in fails.items():
                rate(p, rater, vid, pattern[k % len(pattern)])
        queue_judge(p, videos, profile="loop")
        run_worker(project_dir, concurrency=3, drain=True, log=lambda _r: None)
    return project_dir
