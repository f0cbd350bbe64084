"""Who a failed episode's failure is attributed to, proposed from its stored trace alone.

The proposal is a starting point for a person (who may edit it; an edit is never overwritten),
so its reason cites the ticks it rests on. Rules, first match wins, on a failed episode:

1. **environment** — an accepted action failed in execution (the world did not do what was
   commanded: a grasp slipped, a physics step went wrong), or the episode ended without a
   verdict (``parse_failure``);
2. **assistant** (the assistant or agent under test) — for an agent acting alone, any failure
   the world does not explain; otherwise a triggered scheduled error the assistant never
   flagged before it resolved (a missed detection), or assistant guidance the user accepted
   followed by rejected actions within :data:`GUIDANCE_WINDOW` ticks (the advice could not be
   carried out);
3. **user** — the assistant flagged the error and the user refused its call, or nothing on the
   assistant's or the world's side explains the failure (the user's own execution).

A successful episode is attributed to ``none``.
"""

from __future__ import annotations

import json

from storage import ActionRecord, AttributionParty, Project, TurnRecord

GUIDANCE_WINDOW = 30  # ticks after accepting advice in which a rejection counts against it


def propose_attribution(project: Project, episode_id: str) -> tuple[AttributionParty, str]:
    """``(party, reason)`` for the stored episode (see the module docstring)."""
    eps = project.episodes
    ep = eps.get(episode_id)
    metrics = eps.metrics(ep.id)
    if metrics.get("success") == 1.0:
        return "none", "the task succeeded"
    actions = eps.actions(ep.id)
    failed = [a for a in actions if a.accepted and (a.outcome or "").startswith("failed")]
    if failed:
        first = failed[0]
        return "environment", (
            f"{len(failed)} accepted action(s) failed in execution, first {first.text!r} at "
            f"t{first.finished_tick if first.finished_tick is not None else first.tick}: "
            f"{first.outcome}"
        )
    if ep.status.value == "parse_failure":
        return "environment", "the episode ended without a verdict (parse failure)"
    if not ep.config.get("interactive"):  # an agent acting alone: nobody else to blame
        rejected = sum(not a.accepted for a in actions)
        return "assistant", (
            f"the agent under test ended {ep.status.value} at t{ep.ticks} with "
            f"{int(metrics.get('conditions_true', 0))}/{int(metrics.get('conditions', 0))} goal "
            f"conditions met and {rejected} of {len(actions)} action(s) rejected"
        )
    turns = eps.turns(ep.id)
    flags = [t for t in turns if t.speaker == "assistant" and t.flag]
    refused: list[str] = []
    for ev in eps.events(ep.id):
        if ev.category != "error" or ev.trigger_tick is None:
            continue
        end = ev.resolve_tick if ev.resolve_tick is not None else ep.ticks
        seen = [f for f in flags if ev.trigger_tick <= f.tick <= end]
        if not seen:
            return "assistant", (
                f"missed the {ev.type} error {ev.event_id!r} triggered at t{ev.trigger_tick}: "
                f"no flag before it resolved ({ev.resolution}) at t{end}"
            )
        calls = json.loads(ev.data_json or "{}").get("error_calls", [])
        if ev.resolution != "accepted" and any(not ok for _tick, ok in calls):
            refused.append(
                f"refused the assistant's call on the {ev.type} error {ev.event_id!r} "
                f"(flagged at t{seen[0].tick})"
            )
    misled = _misled(turns, actions)
    if misled:
        return "assistant", misled
    if refused:
        return "user", "; ".join(refused)
    return "user", (
        f"no missed error, failed execution or misleading guidance in the trace; the episode "
        f"ended {ep.status.value} at t{ep.ticks} with "
        f"{int(metrics.get('conditions_true', 0))}/{int(metrics.get('conditions', 0))} goal "
        "conditions met"
    )


def _misled(turns: list[TurnRecord], actions: list[ActionRecord]) -> str:
    """Guidance the user accepted, followed by rejected actions: the first such, described."""
    rejected = [a for a in actions if not a.accepted]
    for k, t in enumerate(turns):
        if t.speaker != "assistant" or not t.text:
            continue
        reply = turns[k + 1] if k + 1 < len(turns) else None
        if reply is None or reply.speaker != "user" or reply.move != "accept":
            continue
        after = [a for a in rejected if t.tick <= a.tick <= t.tick + GUIDANCE_WINDOW]
        if after:
            return (
                f"guidance at t{t.tick} ({t.text[:60]!r}) was accepted and followed by "
                f"{len(after)} rejected action(s), first {after[0].text!r} at t{after[0].tick}"
            )
    return ""


def store_attribution(project: Project, episode_id: str) -> None:
    """Propose and store (a person's edit is kept): the ``AFTER_STORE`` hook of batch jobs."""
    party, reason = propose_attribution(project, episode_id)
    project.batches.propose(episode_id, party, reason)
