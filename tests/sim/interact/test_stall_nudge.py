"""A person in the user's seat who stops to think is nudged, not flooded: the oracle's "You seem
to have paused" waits STALL ticks, then twice as long each time, while a real mistake still
stands and is repeated every REPEAT ticks."""

from __future__ import annotations

import itertools

from sim.episode import open_scenario
from sim.interact import HumanUser, build_interactive
from sim.interact._oracle import STALL
from sim.users import PROFILES


def test_an_idle_person_is_nudged_with_a_growing_pause() -> None:
    ep = build_interactive(open_scenario("cook-patty"), persona=PROFILES["expert"],
                           user="human", record=False)  # fmt: skip
    human = ep.agent.user
    assert isinstance(human, HumanUser)
    runner = ep.runner
    runner.start()
    for _ in range(400):  # the person reads, types nothing, does nothing
        runner.step()
    nudges = [t.tick for t in ep.agent.conversation
              if t.speaker == "assistant" and "seem to have paused" in t.text]  # fmt: skip
    # 400 idle ticks: nudged after STALL, then 2·STALL, then 4·STALL later, not every 6 ticks
    assert 2 <= len(nudges) <= 4, nudges
    gaps = [b - a for a, b in itertools.pairwise(nudges)]
    assert gaps[0] >= STALL and all(b >= 2 * a - 1 for a, b in itertools.pairwise(gaps))
