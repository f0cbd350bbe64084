"""An interactive episode's IVG metrics from its stored trace alone (spec §4, issue 11 item 8).

:func:`episode_inputs` reads the episode row and config, its events, turns, actions, conditions
and final snapshot through ``project.episodes`` and builds the :mod:`sim.metrics` records;
:func:`episode_metrics` scores them. Nothing runs a world or calls a model, so a stored batch is
re-scored offline and identically, whenever. How the trace maps onto the records:

- **success**: the run completed and every goal predicate holds on the final state (the
  engine's own rule). The goal is the scenario's, unless a plan change that names a ``goal``
  was announced: then the last such goal replaces it. **In time**: also T ≤ 2 (T_ref + α), with
  α from the episode's schedule and T_ref from a stored reference rollout (or the argument).
- **detection**: every scheduled error event with its trigger/commit/resolve/accept ticks;
  flags are assistant turns' flags at their delivery tick; error calls are the user's
  judgements recorded on the event.
- **questions**: the answer is the first assistant text delivered after the user asked (the
  user's own turn at or after the trigger tick); the truth is the harness's reference answer.
  Questions never asked, and duration questions whose item was not cooking (no number to
  grade against), are left out.
- **requests**: t_q is the trigger tick, t_c and H the ticks the harness recorded. A window end
  that says the item left its container or support (``{"not": {"in"|"on": …}}``) is a removal
  (the spec's exclusion rule applies), any other an end of edibility.
- **action validity**: accepted / attempted actions of the episode.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sim.contracts import Truth, parse_predicate
from sim.episode import accepted_events
from sim.interact._trace_state import attempted, final_graph, reference_ticks
from sim.metrics import (
    AssistantFlag,
    DetectionEpisode,
    ErrorCall,
    ErrorEvent,
    Family,
    Message,
    ProactiveRequest,
    Question,
    SuccessRecord,
    grade_detection,
    grade_question,
    in_time_success,
    pooled_mean,
    proactive_score,
)
from storage import EpisodeRecord, EventRecord, Project, TurnRecord


@dataclass(frozen=True)
class EpisodeInputs:
    """The metric records of one stored episode (see the module docstring)."""

    episode_id: str
    status: str
    ticks: int
    tick_s: float
    goal: tuple[bool, ...]  # each goal predicate's value on the final state (TRUE or not)
    plan_changed: bool  # a plan change replaced the goal
    success: SuccessRecord | None  # None: T_ref unknown (no reference rollout stored)
    detection: DetectionEpisode
    questions: tuple[Question, ...]
    requests: tuple[ProactiveRequest, ...]
    attempts: int
    accepted: int

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def goal_met(self) -> bool:
        return self.completed and bool(self.goal) and all(self.goal)

    @property
    def goal_completion(self) -> float:
        """GCR: the TRUE fraction of the goal for a completed run, else 0."""
        return sum(self.goal) / len(self.goal) if self.completed and self.goal else 0.0

    @property
    def action_validity(self) -> float | None:
        return self.accepted / self.attempts if self.attempts else None


def episode_inputs(project: Project, episode_id: str, *, t_ref: int | None = None) -> EpisodeInputs:
    """Build the records from the stored trace (``t_ref`` overrides the reference lookup)."""
    ep = project.episodes.get(episode_id)
    cfg = ep.config
    tick_s = float((cfg.get("timing") or {}).get("tick_s", ep.delta))
    events = project.episodes.events(ep.id)
    turns = project.episodes.turns(ep.id)
    actions = project.episodes.actions(ep.id)
    goal, changed = _goal(project, ep, events)
    alpha = int(cfg.get("alpha", (cfg.get("schedule") or {}).get("alpha", 0)))
    ref = t_ref if t_ref is not None else reference_ticks(project, ep)
    done = ep.status.value == "completed" and bool(goal) and all(goal)
    success = None
    if ref is not None:
        success = SuccessRecord(ep.id, done, ep.ticks, ref, "2(T_ref+alpha)", alpha)
    tried = [a for a in actions if attempted(a)]
    return EpisodeInputs(
        episode_id=ep.id,
        status=ep.status.value,
        ticks=ep.ticks,
        tick_s=tick_s,
        goal=goal,
        plan_changed=changed,
        success=success,
        detection=_detection(ep.id, events, turns),
        questions=tuple(q for e in events if (q := _question(e, turns, tick_s)) is not None),
        requests=tuple(r for e in events if (r := _request(e, turns)) is not None),
        attempts=len(tried),
        accepted=sum(1 for a in tried if a.accepted),
    )


def _goal(
    project: Project, ep: EpisodeRecord, events: Sequence[EventRecord]
) -> tuple[tuple[bool, ...], bool]:
    changes = [
        e
        for e in events
        if e.category == "plan_change"
        and e.trigger_tick is not None
        and json.loads(e.spec_json).get("goal")
    ]
    if not changes:
        return tuple(c.value == "T" for c in project.episodes.conditions(ep.id)), False
    last = max(changes, key=lambda e: (e.trigger_tick or 0, e.idx))
    where = f"episode {ep.id[:8]}: event {last.event_id!r}.goal"
    preds = [
        parse_predicate(g, where=f"{where}[{i}]")
        for i, g in enumerate(json.loads(last.spec_json)["goal"])
    ]
    graph = final_graph(project, ep)
    log = accepted_events(project.episodes.actions(ep.id))
    return tuple(p.evaluate(graph, log) is Truth.T for p in preds), True


def _detection(
    eid: str, events: Sequence[EventRecord], turns: Sequence[TurnRecord]
) -> DetectionEpisode:
    errors, calls = [], []
    for e in events:
        if e.category != "error":
            continue
        spec = json.loads(e.spec_json)
        errors.append(
            ErrorEvent(e.event_id, e.type, tuple(spec.get("targets", ())), e.trigger_tick,
                       e.commit_tick, e.resolve_tick, e.accept_tick)
        )  # fmt: skip
        for tick, correct in json.loads(e.data_json).get("error_calls", ()):
            calls.append(ErrorCall(int(tick), e.event_id, bool(correct)))
    flags = tuple(
        AssistantFlag(t.tick, t.flag, t.flag_target)
        for t in turns
        if t.speaker == "assistant" and t.flag
    )
    return DetectionEpisode(eid, tuple(errors), flags, tuple(calls))


def _question(e: EventRecord, turns: Sequence[TurnRecord], tick_s: float) -> Question | None:
    if e.category != "question" or e.trigger_tick is None:
        return None
    data, spec = json.loads(e.data_json), json.loads(e.spec_json)
    truth = data.get("truth")
    if truth is None:
        return None
    asked = e.trigger_tick
    said = next((t.idx for t in turns if t.speaker == "user" and t.tick >= asked), None)
    reply = None
    if said is not None:
        reply = next(
            (t for t in turns if t.idx > said and t.speaker == "assistant" and t.text), None
        )
    return Question(
        question_id=e.event_id,
        family=cast(Family, spec["family"]),
        truth=truth,
        asked_tick=asked,
        answer=None if reply is None else reply.text,
        answer_tick=None if reply is None else reply.tick,
        tick_s=tick_s,
        text=str(data.get("question", "")),
    )


def _request(e: EventRecord, turns: Sequence[TurnRecord]) -> ProactiveRequest | None:
    if e.category != "request" or e.trigger_tick is None:
        return None
    data, spec = json.loads(e.data_json), json.loads(e.spec_json)
    item = str(spec["about"]["item"])
    h = data.get("h")
    removal = _is_removal(spec.get("window_end"))
    messages = tuple(
        Message(t.tick, t.text, generated_tick=json.loads(t.meta_json).get("asked"))
        for t in turns
        if t.speaker == "assistant" and t.text
    )
    return ProactiveRequest(
        request_id=e.event_id,
        item_names=tuple(dict.fromkeys((item, item.replace("_", " ")))),
        request_tick=e.trigger_tick,
        complete_tick=data.get("t_c"),
        end_tick=None if removal else h,
        removed_tick=h if removal else None,
        messages=messages,
    )


def _is_removal(end: Any) -> bool:
    return isinstance(end, dict) and set(end) == {"not"} and set(end["not"]) <= {"in", "on"}


def episode_metrics(
    project: Project, episode_id: str, *, t_ref: int | None = None
) -> dict[str, float | None]:
    """The episode's metric values; ``None`` where a metric has no denominator.

    Names (stable; fractions in [0, 1] unless a count):

    - ``success``: 1 if completed with every (effective) goal predicate TRUE;
      ``in_time_success``: and T ≤ ``deadline`` = 2 (``t_ref`` + α) (None without T_ref);
    - ``goal_completion``: the TRUE fraction of the goal if completed, else 0;
      ``plan_changed``: 1 if a plan change replaced the goal;
    - ``errors_triggered`` / ``errors_detected`` / ``errors_prevented`` / ``false_flags``
      (counts, to pool over a run), ``detection_recall`` and ``prevention`` (this episode's);
    - ``questions_graded`` and ``qa_score`` (their mean score); ``requests_graded`` and
      ``proactive_score`` (their mean A(q)); ``qa_overall``: both pooled (spec §4.4);
    - ``attempts``, ``accepted`` and ``action_validity`` = accepted / attempted;
    - ``ticks``: T, the episode's length.
    """
    x = episode_inputs(project, episode_id, t_ref=t_ref)
    det = grade_detection(x.detection)
    q_scores = [(x.episode_id, grade_question(q)) for q in x.questions]
    p_scores: list[tuple[str, float | None]] = [
        (x.episode_id, None if (a := proactive_score(r)) is None else float(a)) for r in x.requests
    ]
    qa, pro = pooled_mean(q_scores), pooled_mean(p_scores)
    overall = pooled_mean([*q_scores, *p_scores])
    s = x.success
    return {
        "success": float(x.goal_met),
        "in_time_success": None if s is None else float(in_time_success(s)),
        "t_ref": None if s is None else float(s.t_ref),
        "deadline": None if s is None else float(s.deadline),
        "goal_completion": x.goal_completion,
        "plan_changed": float(x.plan_changed),
        "errors_triggered": float(det.triggered),
        "errors_detected": float(det.detected),
        "errors_prevented": float(det.prevented),
        "false_flags": float(det.false_flags),
        "detection_recall": det.detected / det.triggered if det.triggered else None,
        "prevention": det.prevented / det.triggered if det.triggered else None,
        "questions_graded": float(qa.n),
        "qa_score": qa.value,
        "requests_graded": float(pro.n),
        "proactive_score": pro.value,
        "qa_overall": overall.value,
        "attempts": float(x.attempts),
        "accepted": float(x.accepted),
        "action_validity": x.action_validity,
        "ticks": float(x.ticks),
    }


def store_episode_metrics(
    project: Project, episode_id: str, *, t_ref: int | None = None
) -> dict[str, float]:
    """Compute :func:`episode_metrics` and write its non-None values into the episode's
    metrics (replacing same-named values); returns what was written."""
    values = {k: v for k, v in episode_metrics(project, episode_id, t_ref=t_ref).items()
              if v is not None}  # fmt: skip
    project.episodes.set_metrics(episode_id, values)
    return values
