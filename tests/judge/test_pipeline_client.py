"""The pipeline through the real OpenAI-compatible client and a loopback HTTP server."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from judge import OpenAIModel, judge_video, scripted_judge
from judge.models import ModelProfile
from judge.models.loopback import FakeServer
from judge.video.loopback import wire_responder
from storage import RunCall
from storage.media import index_video
from tests.casefactory import write_video


def test_gated_run_over_http(tmp_path: Path) -> None:
    path = write_video(tmp_path / "clip.mp4", n=24)
    judge = scripted_judge(answers={"T2": {"S2": "no"}}, inspections={"P1": 1})

    responder = wire_responder(judge)

    records: list[RunCall] = []
    with FakeServer(responder) as srv:
        profile = ModelProfile(name="loop", base_url=srv.base_url, model="fake-vlm",
                               price_in_per_mtok=1.0, price_out_per_mtok=4.0)  # fmt: skip
        api = OpenAIModel(profile, recorder=records.append, api_key="sk-loopback-test")
        f1 = np.full((48, 64, 3), 90, np.uint8)
        r = judge_video(api, path, index_video(path), "Put both blocks on the tray.", f1)
        chats = [q for q in srv.requests if q.path.endswith("/chat/completions")]
    assert len(chats) == r.calls == 11 and len(records) == 11 and all(x.ok for x in records)
    s = r.scores["sequential"]
    assert s.task_levels == (3, 1) and s.score.p100 == 100.0
    assert r.cost_usd > 0 and r.cost_usd == api.spent_usd
    # Images went out as data URLs, next to their evidence ids; records keep only the ids.
    p1 = chats[-4].body["messages"]
    parts = [p for m in p1 if isinstance(m["content"], list) for p in m["content"]]
    assert sum(p.get("type") == "image_url" for p in parts) == 1 + 24 + 12
    assert "data:image/jpeg;base64," in str(parts) and "I1-12" in str(parts)
    assert "base64" not in str(records[-4].request)
