"""Write an episode bundle (workbench-episode-bundle/1) from your own harness: stdlib only.

    python docs/examples/episode_bundle.py OUT_DIR
    workbench episode import OUT_DIR --project P

The story: the agent pulls the drawer, the handle slips, and the agent goes on believing the
drawer is open; its pick from the drawer is refused. Open it in the Episode workspace and click
the refusal: the inspector shows the drawer shut in the world and open in the belief.
"""

import json
import sys
from pathlib import Path

# fmt: off


def scene(tick, kind, drawer_open):
    drawer = {"id": "drawer", "type": "drawer", "pos": [0.3, 0, 0.4], "size": [0.1, 0.1, 0.05],
              "attrs": {"open": drawer_open}}
    mug = {"id": "mug_red", "type": "mug", "pos": [0.3, 0, 0.38], "size": [0.03, 0.03, 0.05]}
    return {"tick": tick, "type": kind, "objects": [drawer, mug],
            "relations": [["in", "mug_red", "drawer"]]}


out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
stream = [
    scene(0, "state", 0.0),
    {"tick": 2, "type": "say", "speaker": "user", "text": "Get me the red mug."},
    {"tick": 5, "type": "action", "text": "open the drawer", "end_tick": 20,
     "outcome": "failed: the handle slipped"},
    {"tick": 21, "type": "say", "speaker": "assistant", "text": "The drawer is open now."},
    scene(40, "belief", 1.0),
    {"tick": 40, "type": "rejected", "text": "pick up the red mug",
     "reasons": ["mug_red is inside the closed drawer"]},
]
meta = {"format": "workbench-episode-bundle/1", "scenario": "mug-from-drawer", "family": "tidy",
        "agent": "my-policy", "tick_s": 0.1, "ticks": 60, "success": False,
        "goal": [{"text": "mug_red held"}, {"text": "drawer open"}]}
(out / "episode.json").write_text(json.dumps(meta, indent=2))
(out / "stream.jsonl").write_text("".join(json.dumps(x) + "\n" for x in stream))
print(f"wrote {out}")
# fmt: on
