"""Rounds of a stored interactive episode as the interaction-quality judge sees them (§4.3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge import QualityRoundsError, episode_rounds
from judge.quality._rounds import scenes_at
from sim.episode import open_scenario, run_episode
from storage import Project
from storage._db import write
from tests.judge.quality_judge_helpers import make_episode


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Project, str]]:
    root = tmp_path_factory.mktemp("rounds") / "p"
    with Project.create(root) as p:
        yield p, make_episode(p, "cheeseburger", "novice")


def test_a_round_per_spoken_response_with_what_followed(stored: tuple[Project, str]) -> None:
    project, eid = stored
    turns = project.episodes.turns(eid)
    spoken = [t for t in turns if t.speaker == "assistant" and t.text.strip()]
    rounds = episode_rounds(project, eid)
    assert len(rounds) == len(spoken) > 5
    assert [r.turn_idx for r in rounds] == [t.idx for t in spoken]
    assert [r.index for r in rounds] == list(range(len(rounds)))
    ep = project.episodes.get(eid)
    # each round runs to the next response; the last one to the end of the episode
    assert [r.end_tick for r in rounds] == [t.tick for t in spoken[1:]] + [ep.ticks]
    for r, t in zip(rounds, spoken, strict=True):
        d = r.data
        assert d["response"]["text"] == t.text and d["response"]["heard_at_tick"] == t.tick
        assert d["response"]["generated_from_tick"] == json.loads(t.meta_json)["asked"]
        before = [x["text"] for x in d["conversation_before"]]
        assert before == [x.text for x in turns if x.idx < t.idx and x.text][-40:]
        for said in d["after_response"]["user_said"]:
            assert r.tick <= said["tick"] <= r.end_tick
        for act in d["after_response"]["user_actions"]:
            assert r.tick <= act["tick"] < r.end_tick
    actions = project.episodes.actions(eid)
    placed = sum(len(r.data["after_response"]["user_actions"]) for r in rounds)
    assert placed == sum(1 for a in actions if a.tick >= spoken[0].tick)  # each in one round


def test_the_world_is_rebuilt_exactly_as_the_camera_showed_it(stored: tuple[Project, str]) -> None:
    """The scene rebuilt from keyframes and diffs equals every frame the assistant was sent."""
    project, eid = stored
    frames: dict[int, dict[str, str]] = {}
    for x in project.episodes.exchanges(eid, "assistant"):
        for f in json.loads(x.sent_json)["frames"]:
            frames[f["tick"]] = f["scene"]
    assert len(frames) > 100 and max(frames) > 50  # past the first keyframe interval
    assert scenes_at(project, eid, frames) == frames
    r = episode_rounds(project, eid)[-1]
    assert r.data["world_when_heard"]["objects"] == scenes_at(project, eid, [r.tick])[r.tick]


def test_the_judge_sees_no_hidden_notes_flags_plans_or_events(stored: tuple[Project, str]) -> None:
    project, eid = stored
    plants = {
        "flag": "PLANT-FLAG-1",
        "memory": "PLANT-NOTE-2",
        "private": "PLANT-PLAN-3",
        "event": "PLANT-EVENT-4",
        "move": "PLANT-MOVE-5",
    }
    turns = project.episodes.turns(eid)
    first = next(t for t in turns if t.speaker == "assistant" and t.text)
    user = next(t for t in turns if t.speaker == "user" and t.idx > first.idx)
    with write(project.db):
        project.db.execute(
            "UPDATE sim_turns SET flag = ?, flag_target = ? WHERE episode_id = ? AND idx = ?",
            [plants["flag"], plants["flag"], eid, first.idx],
        )
        project.db.execute(
            "UPDATE sim_turns SET move = ? WHERE episode_id = ? AND idx = ?",
            [plants["move"], eid, user.idx],
        )
        for x in project.episodes.exchanges(eid):
            sent, got = json.loads(x.sent_json), json.loads(x.received_json or "{}")
            if x.party == "assistant":
                sent["memory"] = {"note": plants["memory"]}
                got["note"] = plants["memory"]
            else:
                sent["queue"] = [plants["private"]]
                got["plan"] = plants["private"]
            project.db.execute(
                "UPDATE sim_exchanges SET sent_json = ?, received_json = ? "
                "WHERE episode_id = ? AND idx = ?",
                [json.dumps(sent), json.dumps(got), eid, x.idx],
            )
        project.db.execute(
            "UPDATE sim_events SET spec_json = json_set(spec_json, '$.mistake', ?), "
            "data_json = json_set(data_json, '$.note', ?) WHERE episode_id = ?",
            [plants["event"], plants["event"], eid],
        )
    try:
        text = json.dumps([r.data for r in episode_rounds(project, eid)])
        for what, plant in plants.items():
            assert plant not in text, what
        prefs = episode_rounds(project, eid)[0].data["public_preferences"]
        assert set(prefs) == {"speed", "interruption"}  # skill and trust stay private
    finally:
        with write(project.db):  # the module's other tests read this episode too
            for t in (first, user):
                project.db.execute(
                    "UPDATE sim_turns SET flag = ?, flag_target = ?, move = ? "
                    "WHERE episode_id = ? AND idx = ?",
                    [t.flag, t.flag_target, t.move, eid, t.idx],
                )


def test_silence_and_wordless_flags_are_not_rounds(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        eid = make_episode(p)
        n = len(episode_rounds(p, eid))
        last = p.episodes.turns(eid)[-1]
        # a flagged reply with no words, and one that is only whitespace
        with write(p.db):
            for k, text in enumerate(["", "   "], start=1):
                p.db.execute(
                    "INSERT INTO sim_turns (episode_id, idx, tick, speaker, text, flag) "
                    "VALUES (?, ?, ?, 'assistant', ?, 'wrong_object')",
                    [eid, last.idx + k, last.tick, text],
                )
        assert len(episode_rounds(p, eid)) == n


def test_episodes_without_a_conversation_are_refused(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        ep = run_episode(open_scenario("cook-patty"), mode="symbolic", project=p)
        with pytest.raises(QualityRoundsError, match="not an interactive episode"):
            episode_rounds(p, ep.episode_id or "")
