"""Audited judge runs: the only code that writes ``judge_runs`` and its child tables.

A run is started (status ``running``) before the first model call, every call is appended as it
happens (its own small transaction, so a crash keeps the audit trail), and the run's results
(plans, gate answers, frames, inspections, scores) are written by :meth:`JudgeRuns.finish` inside
the transaction that marks its job done. Scores can be recomputed later from the recorded
answers alone (:meth:`JudgeRuns.rescore`), without calling a model again.

``judge_runs.scores`` holds ``{"primary": rule, "rules": {rule: {T100, P100, S, coverage, ...,
task_levels, physics_levels}}, "stats": {...}, "extra": {...}}``; levels are written in the CLI
notation (``3``, ``NA``, ``-``, ``?``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import sqlite_utils

from annotation import GATES_ALL, Score, UserError
from storage._db import write
from storage._history import now
from storage._judge_records import (
    GateTrace,
    InspectionTrace,
    RecordedAnswers,
    RuleScore,
    RunAnswer,
    RunCall,
    RunInspection,
    RunResult,
    RunSubgoal,
    RunSummary,
    RunTrace,
    ScoreFn,
    roi_json,
    row_to_answer,
    row_to_call_summary,
    row_to_frame,
    row_to_inspection,
    row_to_subgoal,
    row_to_summary,
)


class JudgeRunError(UserError, ValueError):
    """A judge-run operation that cannot be applied (unknown run, wrong status)."""


class JudgeRuns:
    """Writes and reads audited judge runs of one project."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    # ---- writes ---------------------------------------------------------------------------
    def start(
        self,
        *,
        job_id: int | None,
        video_id: str,
        profile: str | None,
        model: str | None,
        mode: str,
        prompt_version: str,
        config: Mapping[str, Any],
    ) -> int:
        """Create a run in status ``running``; returns its id."""
        with write(self._db):
            tbl = self._db.table("judge_runs")
            tbl.insert(
                {"job_id": job_id, "video_id": video_id, "profile": profile, "model": model,
                 "mode": mode, "prompt_version": prompt_version,
                 "config": json.dumps(config, sort_keys=True), "status": "running",
                 "cost_usd": 0.0, "tokens_in": 0, "tokens_out": 0, "created_at": now()}
            )  # fmt: skip
            assert tbl.last_pk is not None
            return int(tbl.last_pk)

    def record_call(self, run_id: int, call: RunCall) -> int:
        """Append one call to the run's audit trail (committed at once); returns its seq."""
        with write(self._db):
            seq = 1 + int(
                self._db.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM judge_calls WHERE run_id = ?", [run_id]
                ).fetchone()[0]
            )
            self._db.table("judge_calls").insert(
                {"run_id": run_id, "seq": seq, "stage": call.stage,
                 "prompt_version": call.prompt_version,
                 "request": json.dumps(call.request, sort_keys=True, default=str),
                 "reply": call.reply, "ok": int(call.ok), "error": call.error,
                 "latency_s": call.latency_s, "tokens_in": call.tokens_in,
                 "tokens_out": call.tokens_out, "cost_usd": call.cost_usd, "created_at": now()}
            )  # fmt: skip
            return seq

    def finish(self, run_id: int, result: RunResult) -> str:
        """Write a run's results and mark it done; returns ``judge_runs:<id>``.

        Meant to run inside the transaction that completes the run's job (it joins it).
        """
        with write(self._db):
            self._require_status(run_id, "running")
            self._db.table("judge_subgoals").insert_all(
                {"run_id": run_id, "axis": g.axis, "sid": g.sid, "source": g.source,
                 "target": g.target, "action": g.action, "end_state": g.end_state,
                 "requires": json.dumps(list(g.requires)), "reason": g.reason}
                for g in result.subgoals
            )  # fmt: skip
            self._db.table("judge_answers").insert_all(
                {"run_id": run_id, "axis": a.axis, "gate": a.gate, "sid": a.sid,
                 "answer": a.answer, "unresolved": int(a.unresolved),
                 "evidence_ids": json.dumps(list(a.evidence_ids)),
                 "timestamps_s": json.dumps(list(a.timestamps_s)), "note": a.note}
                for a in result.answers
            )  # fmt: skip
            self._db.table("judge_frames").insert_all(
                {"run_id": run_id, "evidence_id": f.evidence_id, "frame_index": f.frame_index,
                 "time_s": f.time_s, "roi": roi_json(f.roi), "origin": f.origin}
                for f in result.frames
            )  # fmt: skip
            self._db.table("judge_inspections").insert_all(
                {"run_id": run_id, "seq": i.seq, "axis": i.axis, "gate": i.gate,
                 "start_s": i.start_s, "end_s": i.end_s, "roi": roi_json(i.roi),
                 "question": i.question, "expected_evidence": i.expected_evidence,
                 "n_frames": i.n_frames, "evidence_ids": json.dumps(list(i.evidence_ids))}
                for i in result.inspections
            )  # fmt: skip
            scores = {
                "primary": result.primary,
                "rules": {k: v.to_json() for k, v in result.scores.items()},
                "stats": dict(result.stats),
                "extra": dict(result.extra),
            }
            self._write_scores(run_id, result.scores.get(result.primary), scores)
            self._db.table("judge_runs").update(
                run_id,
                {"status": "done", "cost_usd": result.cost_usd, "tokens_in": result.tokens_in,
                 "tokens_out": result.tokens_out, "finished_at": now()},
            )  # fmt: skip
        return f"judge_runs:{run_id}"

    def fail(self, run_id: int, error: str, *, abandoned: bool = False) -> None:
        """Mark a running run failed (or abandoned: cancelled, or left by a dead worker)."""
        self._end("id = ?", [run_id], error, abandoned)

    def end_for_jobs(self, job_ids: Sequence[int], error: str, *, abandoned: bool = False) -> int:
        """End every run of these jobs still ``running``: when a job ends (gave up, cancelled,
        done on another attempt), and when a new attempt starts (the old attempt's worker died
        and nobody else will finish its run). Returns how many it ended."""
        if not job_ids:
            return 0
        return self._end(f"job_id IN ({','.join('?' * len(job_ids))})", list(job_ids), error,
                         abandoned)  # fmt: skip

    def _end(self, where: str, args: list[Any], error: str, abandoned: bool) -> int:
        """One UPDATE: the matching running runs end, their totals summed from their calls."""
        total = "SELECT COALESCE(SUM({}), 0) FROM judge_calls c WHERE c.run_id = judge_runs.id"
        with write(self._db):
            cur = self._db.execute(
                f"UPDATE judge_runs SET status = ?, error = ?, finished_at = ?, "
                f"cost_usd = ({total.format('c.cost_usd')}), "
                f"tokens_in = ({total.format('c.tokens_in')}), "
                f"tokens_out = ({total.format('c.tokens_out')}) "
                f"WHERE status = 'running' AND {where}",
                ["abandoned" if abandoned else "failed", error, now(), *args],
            )
            return int(cur.rowcount)

    def rescore(self, run_id: int, score_fn: ScoreFn, *, save: bool = True) -> dict[str, RuleScore]:
        """Recompute a done run's scores from its recorded answers, without model calls."""
        run = self.get(run_id)
        if run.status != "done":
            raise JudgeRunError(f"judge run {run_id} is {run.status}; only done runs re-score")
        scores = dict(score_fn(self.answers_for_rescore(run_id)))
        if save:
            primary = str(run.scores.get("primary") or _default_primary(run.mode))
            blob = dict(run.scores) | {
                "primary": primary,
                "rules": {k: v.to_json() for k, v in scores.items()},
            }
            with write(self._db):
                self._write_scores(run_id, scores.get(primary), blob)
        return scores

    # ---- reads ----------------------------------------------------------------------------
    def get(self, run_id: int) -> RunSummary:
        rows = list(self._db.table("judge_runs").rows_where("id = ?", [run_id]))
        if not rows:
            raise JudgeRunError(f"no judge run {run_id} in this project")
        return row_to_summary(rows[0])

    def runs(self, video_id: str) -> list[RunSummary]:
        """Every run of a video, oldest first."""
        rows = self._db.table("judge_runs").rows_where("video_id = ?", [video_id], order_by="id")
        return [row_to_summary(r) for r in rows]

    def latest(self, video_id: str, *, status: str | None = "done") -> RunSummary | None:
        """The newest run of a video (by default the newest finished one)."""
        runs = [r for r in self.runs(video_id) if status is None or r.status == status]
        return runs[-1] if runs else None

    def trace(self, run_id: int) -> RunTrace:
        """Plans, gates with rows, inspections with their frames, and calls of one run."""
        run = self.get(run_id)
        subgoals = self._subgoals(run_id)
        frames = tuple(row_to_frame(r) for r in self._rows("judge_frames", run_id))
        by_id = {f.evidence_id: f for f in frames}
        answers = self._answers(run_id)
        gate_order = [*GATES_ALL, "VQA"]
        gates = tuple(
            GateTrace(rows[0].axis, g, rows)
            for g in gate_order
            for axis in ("task", "physics")
            if (rows := tuple(a for a in answers if a.gate == g and a.axis == axis))
        )
        inspections = tuple(
            InspectionTrace(i, tuple(by_id[e] for e in i.evidence_ids if e in by_id))
            for i in self._inspections(run_id)
        )
        calls = tuple(
            row_to_call_summary(r) for r in self._rows("judge_calls", run_id, order_by="seq")
        )
        return RunTrace(
            run=run,
            task_plan=tuple(s for s in subgoals if s.axis == "task"),
            physics_plan=tuple(s for s in subgoals if s.axis == "physics"),
            review=tuple(s for s in subgoals if s.axis == "physics_review"),
            gates=gates,
            inspections=inspections,
            frames=frames,
            calls=calls,
        )

    def call_detail(self, run_id: int, seq: int) -> RunCall:
        """One call's full request and reply (the exact prompt sent)."""
        rows = list(
            self._db.table("judge_calls").rows_where("run_id = ? AND seq = ?", [run_id, seq])
        )
        if not rows:
            raise JudgeRunError(f"judge run {run_id} has no call {seq}")
        r = rows[0]
        return RunCall(r["stage"], r["prompt_version"], json.loads(r["request"]), r["reply"],
                       bool(r["ok"]), r["error"], r["latency_s"] or 0.0, r["tokens_in"] or 0,
                       r["tokens_out"] or 0, r["cost_usd"] or 0.0)  # fmt: skip

    def answers_for_rescore(self, run_id: int) -> RecordedAnswers:
        run = self.get(run_id)
        subgoals = self._subgoals(run_id)
        return RecordedAnswers(
            run_id=run_id,
            mode=run.mode,
            task_sids=tuple(s.sid for s in subgoals if s.axis == "task"),
            physics_sids=tuple(s.sid for s in subgoals if s.axis == "physics"),
            answers=self._answers(run_id),
        )

    # ---- helpers --------------------------------------------------------------------------
    def _rows(self, table: str, run_id: int, order_by: str = "id") -> list[dict[str, Any]]:
        return list(self._db.table(table).rows_where("run_id = ?", [run_id], order_by=order_by))

    def _subgoals(self, run_id: int) -> list[RunSubgoal]:
        return [row_to_subgoal(r) for r in self._rows("judge_subgoals", run_id)]

    def _answers(self, run_id: int) -> tuple[RunAnswer, ...]:
        return tuple(row_to_answer(r) for r in self._rows("judge_answers", run_id))

    def _inspections(self, run_id: int) -> list[RunInspection]:
        return [
            row_to_inspection(r) for r in self._rows("judge_inspections", run_id, order_by="seq")
        ]

    def _require_status(self, run_id: int, status: str) -> None:
        row = self._db.execute("SELECT status FROM judge_runs WHERE id = ?", [run_id]).fetchone()
        if row is None:
            raise JudgeRunError(f"no judge run {run_id} in this project")
        if row[0] != status:
            raise JudgeRunError(f"judge run {run_id} is {row[0]}, not {status}")

    def _write_scores(
        self, run_id: int, primary: RuleScore | None, blob: Mapping[str, Any]
    ) -> None:
        s = primary.score if primary is not None else Score(None, None, None, None)
        self._db.table("judge_runs").update(
            run_id,
            {"t100": s.t100, "p100": s.p100, "s": s.s, "coverage": s.coverage,
             "scores": json.dumps(blob, sort_keys=True)},
        )  # fmt: skip


def _default_primary(mode: str) -> str:
    return "simple_vqa" if mode == "simple_vqa" else "sequential"
