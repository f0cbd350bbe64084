"""Pinned symbolic traces: a speed-up of the symbolic world must not change a single state hash.

Each case runs a shipped scenario's reference in symbolic mode (seed from the scenario) with
the trace on, and compares a hash of the concatenated per-tick state hashes with the value the
world produced before the issue-11 speed work. The anomaly case adds a drift, a displacement, a
flip and a removal so the injection paths are pinned too. If a pin breaks, the trace changed:
that is a change of recorded values (every stored episode would stop replaying), not a test to
update.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from sim.episode import EpisodeRunner, ScriptedAgent, make_world, open_scenario
from sim.scenario import shipped

#: scenario -> (ticks, sha256 of the concatenated per-tick state hashes). cook-patty: cooking
#: every tick, burner on and off; mug-in-drawer: open/close and the visibility of what is
#: inside; push-together: pushes move objects and change supports; cheeseburger: the longest
#: reference, stacking and cooking.
PINNED = {
    "cook-patty": (299, "0f2995670f2966734f97d873d0b830d5af022e09df40cb73d38b5e3cd2782e74"),
    "mug-in-drawer": (140, "6b9f9f980c2d94135d6e465bf692df2e12b743608905b3ef2ace9c6de8be50f6"),
    "push-together": (30, "5474d3f8157244d882a4d424b94facf21b6947bb54be9d084edaa9fd0fc297d1"),
    "cheeseburger": (479, "49de79f62847ca4dc5ce3780cf7d187be4c6a7d5a6ccf542d942f15f8f6cbde6"),
}

#: injected into cook-patty: every anomaly kind (drift then moves the plate every tick)
ANOMALIES = [
    {"kind": "drift", "obj": "plate", "velocity": [0.01, -0.005], "at_tick": 7},
    {"kind": "displace", "obj": "cutting_board", "offset": [0.05, 0.02, 0.0], "at_tick": 24},
    {"kind": "flip", "obj": "plate", "at_tick": 41},
    {"kind": "remove", "obj": "cutting_board", "at_tick": 58},
]
PINNED_ANOMALIES = (299, "d211dfd318a741ffc9e71678340cc1d23a2830e7e858e4a5943247c122e12869")


def _trace(ref: str) -> tuple[int, str]:
    bound = open_scenario(ref)
    runner = EpisodeRunner(make_world(bound, "symbolic"), bound, ScriptedAgent(bound.reference))
    runner.run()
    assert runner.result is not None and runner.result.status == "completed"
    assert len(runner.hashes) == runner.tick + 1  # one hash per tick, tick 0 included
    return runner.tick, hashlib.sha256("".join(runner.hashes).encode()).hexdigest()


@pytest.mark.parametrize("name", sorted(PINNED))
def test_reference_trace_hashes_are_pinned(name: str) -> None:
    assert _trace(name) == PINNED[name]


def test_trace_with_every_anomaly_kind_is_pinned(tmp_path: Path) -> None:
    doc = json.loads(shipped()["cook-patty"].read_text())
    doc["anomalies"] = ANOMALIES
    path = tmp_path / "cook-patty-faults.json"
    path.write_text(json.dumps(doc))
    assert _trace(str(path)) == PINNED_ANOMALIES
