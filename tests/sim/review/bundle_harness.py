"""A harness of the tests' own that records an episode as a bundle, as any other would: a
tabletop where the agent believes it opened the drawer, the world says it did not, and the pick
from the drawer is refused. It knows nothing of the workbench but the bundle format."""

from __future__ import annotations

import json
from pathlib import Path

FAIL_TICK = 40  # the agent believes the drawer is open; it is shut


def write_bundle(root: Path, *, ticks: int = 60) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    drawer = {"id": "drawer", "type": "drawer", "pos": [0.3, 0.0, 0.4], "size": [0.1, 0.1, 0.05]}
    mug = {"id": "mug_red", "type": "mug", "pos": [0.3, 0.0, 0.38], "size": [0.03, 0.03, 0.05]}
    table = {"id": "table", "type": "table", "size": [0.6, 0.4, 0.02]}

    def state(tick: int, kind: str, open_: float) -> dict[str, object]:
        return {"tick": tick, "type": kind,
                "objects": [table, {**drawer, "attrs": {"open": open_}}, mug],
                "relations": [["on", "drawer", "table"], ["in", "mug_red", "drawer"]]}  # fmt: skip

    lines: list[dict[str, object]] = [
        state(0, "state", 0.0),
        {"tick": 2, "type": "say", "speaker": "user", "text": "Get me the red mug, please."},
        {"tick": 5, "type": "action", "text": "open the drawer", "end_tick": 20,
         "outcome": "failed: the handle slipped"},
        state(20, "state", 0.0),  # still shut: the pull slipped
        {"tick": 21, "type": "say", "speaker": "assistant", "text": "The drawer is open now."},
        state(FAIL_TICK, "belief", 1.0),  # …the agent thinks otherwise
        {"tick": FAIL_TICK, "type": "rejected", "text": "pick up the red mug",
         "reasons": ["mug_red is inside the closed drawer"]},
        {"tick": 41, "type": "event", "id": "slip", "category": "error", "what": "trigger",
         "kind": "incorrect_preparation"},
        {"tick": 55, "type": "event", "id": "slip", "category": "error", "what": "resolve",
         "resolution": "episode_end"},
    ]  # fmt: skip
    meta = {"format": "workbench-episode-bundle/1", "scenario": "mug-from-drawer",
            "family": "tidy", "agent": "their-policy-v3", "tick_s": 0.1, "ticks": ticks,
            "status": "completed", "success": False,
            "goal": [{"text": "mug_red held", "true_since": None},
                     {"text": "drawer open", "true_since": None}]}  # fmt: skip
    (root / "episode.json").write_text(json.dumps(meta, indent=2))
    (root / "stream.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return root
