"""IVG metrics from a stored interactive episode: equal to the live run, reproducible offline,
and the edge cases (nothing to score, no reference rollout, a changed goal)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sim.episode import open_scenario, run_episode
from sim.interact import (
    episode_inputs,
    episode_metrics,
    run_interactive,
    store_episode_metrics,
)
from sim.interact._trace_state import final_graph
from sim.metrics import AssistantFlag, ErrorCall, ErrorEvent
from sim.users import PROFILES
from storage import Project

SHIPPED = ("cook-patty", "cheeseburger", "prep-board")


def _reference(project: Project, name: str) -> int:
    ref = run_episode(open_scenario(name), mode="symbolic", project=project, reference=True,
                      anomalies=False)  # fmt: skip
    assert ref.runner.result is not None and ref.runner.result.status == "completed"
    return ref.runner.result.ticks


def _run(project: Project, name: str, persona: str = "balanced", **kw: Any) -> Any:
    return run_interactive(bound=open_scenario(name), persona=PROFILES[persona], project=project,
                           **kw)  # fmt: skip


@pytest.mark.parametrize("name", SHIPPED)
def test_metrics_from_the_trace_equal_what_the_live_run_recorded(tmp_path: Path, name: str) -> None:
    project = Project.create(tmp_path / "p")
    t_ref = _reference(project, name)
    ep = _run(project, name)
    live, harness, result = ep.agent, ep.agent.harness, ep.runner.result
    x = episode_inputs(project, ep.episode_id)
    m = episode_metrics(project, ep.episode_id)

    # the error events, flags and user error calls are exactly the harness's and the turns'
    expected_events = tuple(
        ErrorEvent(e.id, e.spec.type, e.spec.targets, s.trigger_tick, s.commit_tick,
                   s.resolve_tick, s.accept_tick)
        for e, s in zip(harness.events, harness.states, strict=True) if e.spec.category == "error"
    )  # fmt: skip
    assert x.detection.events == expected_events
    flags = tuple(AssistantFlag(t["tick"], t["flag"], t["flag_target"])
                  for t in live.tables.turns if t["flag"])  # fmt: skip
    assert x.detection.flags == flags
    calls = tuple(ErrorCall(t, e.id, c) for e, s in zip(harness.events, harness.states, strict=True)
                  for t, c in s.data.get("error_calls", ()))  # fmt: skip
    assert x.detection.calls == calls
    # questions: the harness's reference answer, asked at the trigger tick
    asked = {e.id: s for e, s in zip(harness.events, harness.states, strict=True)
             if e.spec.category == "question" and s.trigger_tick is not None}  # fmt: skip
    assert {q.question_id: (q.truth, q.asked_tick) for q in x.questions} == {
        k: (s.data["truth"], s.trigger_tick) for k, s in asked.items()
    }
    for q in x.questions:  # the answer is the first assistant words delivered after asking
        said = next(i for i, t in enumerate(live.tables.turns)
                    if t["speaker"] == "user" and t["tick"] >= q.asked_tick)  # fmt: skip
        first = next(t for t in live.tables.turns[said + 1 :]
                     if t["speaker"] == "assistant" and t["text"])  # fmt: skip
        assert (q.answer, q.answer_tick) == (first["text"], first["tick"])
    requests = {e.id: s.data for e, s in zip(harness.events, harness.states, strict=True)
                if e.spec.category == "request" and s.trigger_tick is not None}  # fmt: skip
    assert {r.request_id: r.complete_tick for r in x.requests} == {
        k: d["t_c"] for k, d in requests.items()
    }
    # the episode-level values are the engine's own
    assert m["success"] == result.metrics["success"]
    assert m["goal_completion"] == result.metrics["gcr"]
    assert m["action_validity"] == result.metrics["validity"]
    assert (m["attempts"], m["accepted"]) == (result.metrics["attempts"],
                                              result.metrics["accepted"])  # fmt: skip
    assert m["ticks"] == result.ticks
    assert m["t_ref"] == t_ref and m["deadline"] == 2 * (t_ref + harness.schedule.alpha)
    assert m["in_time_success"] == float(m["success"] == 1.0 and result.ticks <= m["deadline"])
    assert m["errors_triggered"] == sum(1 for e in expected_events if e.trigger_tick is not None)


def test_metrics_recomputed_after_reopening_the_project_are_identical(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    _reference(project, "cook-patty")
    eid = _run(project, "cook-patty", "expert").episode_id
    first = episode_metrics(project, eid)
    written = store_episode_metrics(project, eid)
    assert written == {k: v for k, v in first.items() if v is not None}
    project.close()
    again = Project.open(tmp_path / "p")
    assert episode_metrics(again, eid) == first
    stored = again.episodes.metrics(eid)
    assert {k: stored[k] for k in written} == written
    # the forgotten burner was flagged before it committed, and the user took the advice
    assert (first["errors_triggered"], first["errors_detected"], first["prevention"]) == (1, 1, 1)


def _schedule(scenario: str, *events: dict[str, Any], alpha: int = 0) -> dict[str, Any]:
    return {"format": "workbench-events/1", "scenario": scenario, "alpha": alpha,
            "events": list(events)}  # fmt: skip


def test_no_events_no_reference_and_an_explicit_t_ref(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    eid = _run(project, "prep-board", schedule=_schedule("prep-board", alpha=7)).episode_id
    m = episode_metrics(project, eid)
    for name in ("detection_recall", "prevention", "qa_score", "proactive_score", "qa_overall",
                 "in_time_success", "t_ref", "deadline"):  # fmt: skip
        assert m[name] is None, name
    assert (m["errors_triggered"], m["questions_graded"], m["requests_graded"]) == (0, 0, 0)
    assert m["success"] == 1.0
    stored = store_episode_metrics(project, eid)
    assert "qa_score" not in stored and "in_time_success" not in stored
    assert "in_time_success" not in project.episodes.metrics(eid)
    ticks = int(m["ticks"] or 0)
    # D = 2 (T_ref + α): a T_ref just long enough, and one a tick too short
    fits = episode_metrics(project, eid, t_ref=ticks // 2 - 7 + ticks % 2)
    assert fits["deadline"] is not None and fits["deadline"] >= ticks
    assert fits["in_time_success"] == 1.0
    late = episode_metrics(project, eid, t_ref=ticks // 2 - 8)
    assert late["deadline"] == 2 * (ticks // 2 - 1) and late["in_time_success"] == 0.0


def test_unanswered_and_unreached_questions(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    sched = _schedule(
        "cook-patty",
        {"id": "picks", "category": "question", "family": "count",
         "trigger": {"in": ["patty", "pan"]}, "about": {"verb": "pick", "obj": "patty"}},
        {"id": "never", "category": "question", "family": "recall",
         "trigger": {"on": ["patty", "plate"]}, "about": {"verb": "pick", "obj": "plate"}},
    )  # fmt: skip
    silent = _run(project, "cook-patty", schedule=sched, assistant="scripted")
    m = episode_metrics(project, silent.episode_id)
    assert m["questions_graded"] == 1 and m["qa_score"] == 0.0  # asked, never answered: 0
    [q] = episode_inputs(project, silent.episode_id).questions  # the unreached one is excluded
    assert q.question_id == "picks" and q.answer is None
    cues = [{"text": "Just once.", "heard": "how many times"}]
    told = _run(project, "cook-patty", schedule=sched, assistant="scripted",
                assistant_options={"cues": cues})  # fmt: skip
    assert episode_metrics(project, told.episode_id)["qa_score"] == 1.0


PLAN_CHANGE = {
    "id": "cheese-to-plate", "category": "plan_change", "trigger": {"on": ["bun", "cutting_board"]},
    "say": "Change of plan: I'd like the cheese on the plate instead.",
    "plan": ["pick up the cheese", "put the cheese on the plate"],
    "goal": [{"on": ["bun", "cutting_board"]}, {"on": ["cheese", "plate"]}],
}  # fmt: skip


def test_a_plan_change_replaces_the_goal(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    ep = _run(project, "prep-board", schedule=_schedule("prep-board", PLAN_CHANGE),
              assistant="scripted")  # fmt: skip
    assert ep.runner.result.metrics["success"] == 0.0  # the scenario's goal: cheese on the board
    m = episode_metrics(project, ep.episode_id)
    assert (m["plan_changed"], m["success"], m["goal_completion"]) == (1.0, 1.0, 1.0)


def test_the_final_graph_rebuilt_from_keyframes_and_diffs_matches_the_snapshot(
    tmp_path: Path,
) -> None:
    project = Project.create(tmp_path / "p")
    eid = _run(project, "cheeseburger").episode_id
    ep = project.episodes.get(eid)
    exact = final_graph(project, ep)
    rebuilt = final_graph(project, _without_final_snapshot(ep))
    assert exact is not None and rebuilt is not None and exact.tick == rebuilt.tick == ep.ticks
    assert rebuilt.relations == exact.relations
    for k, node in exact.nodes.items():
        got = rebuilt.nodes[k].attrs
        assert {a: round(float(v), 3) if isinstance(v, float) else v for a, v in got.items()} == {
            a: round(float(v), 3) if isinstance(v, float) else v for a, v in node.attrs.items()
        }, k


def _without_final_snapshot(ep: Any) -> Any:
    """The same episode as if it ended one tick past its last snapshot (a physics-like trace,
    whose snapshot holds no graph): the graph must come from the ticks."""
    from dataclasses import replace

    return replace(ep, ticks=ep.ticks + 1)
