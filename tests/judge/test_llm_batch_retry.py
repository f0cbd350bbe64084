"""A model server that goes away mid-batch (issue 25): an episode whose endpoint dropped the
connection or answered 5xx is run again, with the queue's backoff, and completes; a rate limit
waits the longer backoff; a 4xx that will not change fails at once, saying so in plain words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import judge  # noqa: F401  (registers the llm participants)
from judge import ModelParticipantError, ModelProfile, save_profile
from judge.models.loopback import Action, Drop, FakeServer, Status
from sim.batch import episode_job_error, parse_manifest, queue_batch
from storage import JobStatus, Profiles, Project, run_worker
from tests.judge.llm_participant_helpers import assistant_script

FAULT_AT = 3  # the 4th request of the first attempt fails; the second attempt starts afresh


ASSISTANT = {
    "scenarios": ["cook-patty"],
    "assistants": [{"name": "asst", "kind": "llm", "options": {"profile": "asst"}}],
}
AGENT = {
    "scenarios": ["stack-two"],
    "agents": [{"name": "tool-agent", "kind": "llm", "options": {"profile": "asst"}}],
}


def _queue(root: Path, srv: FakeServer, who: dict[str, Any] = ASSISTANT) -> tuple[str, int]:
    """A one-episode batch whose model-backed participant (``who``) is the server's model (no
    client-side retries: the client gives up at once, so the queue's retry is what is tested;
    no backoff, so no test waits)."""
    with Project.create(root) as p:
        save_profile(Profiles(p.db), ModelProfile(
            name="asst", base_url=srv.base_url, model="fake-model", api_key_env="",
            max_retries=0))  # fmt: skip
        batch_id, (job_id,) = queue_batch(p, parse_manifest({
            "format": "workbench-batch/1", "name": "outage", "personas": ["balanced"],
            "runs": 1, **who,
        }), retry_backoff_s=0.0, rate_limit_backoff_s=0.0)  # fmt: skip
    return batch_id, job_id


def _failing_once(fault: Action) -> Any:
    script, failed = assistant_script(), []

    def respond(body: dict[str, Any], n: int) -> Action:
        if n == FAULT_AT and not failed:
            failed.append(n)
            return fault
        return script(body, n)

    return respond


@pytest.mark.parametrize(
    "fault",
    [Drop(), Status(500, "model crashed", no_retry=True), Status(503, no_retry=True),
     Status(429, "slow down", no_retry=True)],
    ids=["connection-lost", "http-500", "http-503", "rate-limited"],
)  # fmt: skip
def test_an_outage_mid_episode_is_retried_and_the_episode_completes(
    tmp_path: Path, fault: Action
) -> None:
    root = tmp_path / "p"
    with FakeServer(_failing_once(fault)) as srv:
        batch_id, job_id = _queue(root, srv)
        stats = run_worker(root, drain=True, kind_modules=["judge", "sim.batch"],
                           log=lambda _r: None)  # fmt: skip
        sent = len(srv.chat_requests)
    assert (stats.retried, stats.done, stats.failed) == (1, 1, 0)
    with Project.open(root) as p:
        job = p.jobs.get(job_id)
        assert job.status is JobStatus.DONE and job.attempts == 2
        (cell,) = p.batches.cells(batch_id)
        assert cell.episode_id is not None
        ep = p.episodes.get(cell.episode_id)
        assert ep.status.value == "completed"
        # the episode stored is the second attempt's, whole: its every call, none of the first's
        asked = p.episodes.exchanges(ep.id, "assistant")
        assert len(asked) == sent - FAULT_AT - 1 and all(x.outcome == "valid" for x in asked)


def test_a_request_the_endpoint_refuses_fails_at_once_in_plain_words(tmp_path: Path) -> None:
    root = tmp_path / "p"
    refused = Status(400, "this model does not take that request", no_retry=True)
    with FakeServer(_failing_once(refused)) as srv:
        _batch_id, job_id = _queue(root, srv)
        stats = run_worker(root, drain=True, kind_modules=["judge", "sim.batch"],
                           log=lambda _r: None)  # fmt: skip
    assert (stats.retried, stats.done, stats.failed) == (0, 0, 1)
    with Project.open(root) as p:
        job = p.jobs.get(job_id)
    assert job.status is JobStatus.FAILED and job.attempts == 1
    assert job.error is not None
    assert "the endpoint rejected the request (HTTP 400)" in job.error
    assert "this model does not take that request" in job.error
    assert "not retried: the same request would fail the same way" in job.error


def test_a_rate_limit_waits_the_longer_backoff() -> None:
    err = episode_job_error(ModelParticipantError("rate limited", retryable=True,
                                                  kind="rate_limit"))  # fmt: skip
    assert err.retry and err.rate_limited
    err = episode_job_error(ModelParticipantError("server error", retryable=True, kind="server"))
    assert err.retry and not err.rate_limited


def test_a_tool_agent_whose_server_fails_is_retried_too(tmp_path: Path) -> None:
    from judge.models.loopback import Reply

    plan = [Reply("act", {"command": "pick up the red brick"}),
            Reply("act", {"command": "put the red brick on the blue brick"}),
            Reply("submit", {"claim": "done"})]  # fmt: skip
    root = tmp_path / "p"
    with FakeServer([plan[0], Status(502, no_retry=True), *plan]) as srv:
        batch_id, job_id = _queue(root, srv, AGENT)
        stats = run_worker(root, drain=True, kind_modules=["judge", "sim.batch"],
                           log=lambda _r: None)  # fmt: skip
    assert (stats.retried, stats.done, stats.failed) == (1, 1, 0)
    with Project.open(root) as p:
        assert p.jobs.get(job_id).attempts == 2
        (cell,) = p.batches.cells(batch_id)
        ep = p.episodes.get(str(cell.episode_id))
        assert ep.status.value == "completed"
        assert [x.outcome for x in p.episodes.exchanges(ep.id)] == ["valid"] * 3
