"""An `llm` agent (the W2W tool agent) in a batch: through the worker, over real HTTP to the
loopback server, its model calls stored with each episode."""

from __future__ import annotations

from pathlib import Path

import judge  # noqa: F401  (registers the llm agent kind)
from judge import ModelProfile, save_profile
from judge.models.loopback import FakeServer, Reply
from sim.batch import parse_manifest, queue_batch, results_table
from storage import Profiles, Project, run_worker


def test_llm_agent_batch(tmp_path: Path) -> None:
    script = [Reply("act", {"command": "pick up the red brick"}),
              Reply("act", {"command": "put the red brick on the blue brick"}),
              Reply("submit", {"claim": "done"})] * 2  # fmt: skip
    root = tmp_path / "p"
    with FakeServer(script) as srv:
        with Project.create(root) as p:
            profile = ModelProfile(name="loop", base_url=srv.base_url, model="fake-model",
                                   api_key_env="")  # fmt: skip
            save_profile(Profiles(p.db), profile)
            batch_id, _ = queue_batch(p, parse_manifest({
                "format": "workbench-batch/1", "name": "w2w", "scenarios": ["stack-two"],
                "personas": ["novice"], "runs": 2,
                "agents": [{"name": "tool-agent", "kind": "llm", "options": {"profile": "loop"}}],
            }))  # fmt: skip
        stats = run_worker(root, drain=True, kind_modules=["judge", "sim.batch"],
                           log=lambda _r: None)  # fmt: skip
        calls = len(srv.chat_requests)
    assert stats.done == 2 and stats.failed == 0 and calls == 6
    with Project.open(root) as p:
        (row,) = results_table(p, batch_id).rows
        assert row.key == ("tool-agent",) and row.summaries["success"].mean == 1.0
        stored = [len(p.episodes.exchanges(str(c.episode_id), party="agent"))
                  for c in p.batches.cells(batch_id)]  # fmt: skip
        assert stored == [3, 3]
