"""A model reply is the endpoint's to make as long as it likes; the workbench keeps and re-sends
only so much of it. A reply over ``LIMITS.reply_bytes`` is invalid whatever it says, is stored
cut (and says so), and a re-ask quotes at most a short excerpt of a rejected reply: the requests
stay as small as the first one and the project does not grow by the replies' size (once, a 50 MB
reply grew a project by 308 MB and its re-asks to 52 and 105 MB)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge import ModelProfile, queue_judge, save_profile
from judge.models import ModelCallFailed, OpenAIModel
from judge.models.loopback import Action, BadArgs, FakeServer, Reply, ReplyText
from storage import JobStatus, Project, import_cases
from storage.guard import LIMITS
from tests.judge.client_helpers import Records, profile
from tests.judge.test_client_replies import ask
from tests.storage.hostile import GB, workbench

MB = 1 << 20
HUGE = 50 * MB  # the reply of the report, for the job
BIG = 8 * MB  # for the client alone: far over the limit, quicker to send and parse
CUT = "[cut by the workbench: the reply was "


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (ReplyText("x" * BIG), "the reply is 8,38"),
        (BadArgs("answer", "y" * BIG), "the reply is 8,38"),
        (Reply("z" * BIG, {"verdict": "yes"}), "the reply is 8,38"),
        (BadArgs("answer", '{"verdict": "' + "é" * 100_000 + '"}'), "$.verdict: "),
        (ReplyText("w" * 100_000), "no tool call in the reply"),
    ],
    ids=["8 MB text", "8 MB arguments", "8 MB tool name", "600 KB arguments", "100 KB text"],
)
def test_a_long_reply_is_stored_cut_and_never_sent_back_whole(bad: Action, error: str) -> None:
    with FakeServer([bad] * 3) as srv:
        records = Records()
        model = OpenAIModel(profile(srv, schema_retries=2), recorder=records, api_key="none")
        with pytest.raises(ModelCallFailed) as err:
            ask(model)
        sizes = [len(json.dumps(r.body, ensure_ascii=False)) for r in srv.chat_requests]
    assert len(sizes) == 3 and error in str(err.value), str(err.value)[:300]
    assert len(str(err.value)) < 1000
    assert max(sizes) < sizes[0] + 2 * 3_000, sizes  # each re-ask adds an excerpt at most
    for r in records:
        assert len(r.reply.encode()) <= LIMITS.reply_bytes + 100
        assert len(json.dumps(r.request, ensure_ascii=False)) < 10_000 and len(r.error or "") < 1000
    if "8,38" in error:
        assert all(r.reply.endswith("are kept]") and CUT in r.reply for r in records)


KEY = "sk-test-limits-7a2c"


def test_a_judge_job_fed_50_mb_replies_fails_cleanly_and_the_project_stays_small(
    tmp_path: Path, cases_dir: Path
) -> None:
    root = tmp_path / "p"
    with FakeServer(lambda body, n: ReplyText("x" * HUGE)) as srv:
        with Project.create(root) as p:
            import_cases(p, cases_dir)
            save_profile(p.profiles, ModelProfile(
                name="vlm", base_url=srv.base_url, model="fake-vlm", api_key_env="WB_TEST_KEY",
                timeout_s=60, max_retries=0, schema_retries=2, max_output_tokens=64,
            ))  # fmt: skip
            video = p.videos()[0].id
            (job,) = queue_judge(p, [video], profile="vlm", batch="b", max_attempts=1)[1]
        before = sum(f.stat().st_size for f in root.glob("project.sqlite*"))
        done = workbench("worker", "--project", str(root), "--drain", env={"WB_TEST_KEY": KEY})
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.peak_bytes < GB, f"the worker peaked at {done.peak_bytes / MB:.0f} MB"
        sizes = [len(json.dumps(r.body)) for r in srv.chat_requests]
    assert len(sizes) == 3 and max(sizes) < 20_000, sizes  # three tries, none re-sends a reply
    with Project.open(root) as p:
        ran = p.jobs.get(job)
        assert ran.status is JobStatus.FAILED
        assert "the reply is 52,429,0" in (ran.error or "") and len(ran.error or "") < 2000
        replies = p.db.execute("SELECT reply FROM judge_calls").fetchall()
        assert len(replies) == 3 and all(CUT in r[0] for r in replies)
    grown = sum(f.stat().st_size for f in root.glob("project.sqlite*")) - before
    assert grown < 3 * LIMITS.reply_bytes + 4 * MB, f"the project grew by {grown / MB:.1f} MB"
