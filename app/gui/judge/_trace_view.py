"""The judge trace view: what the VLM judge planned, asked, looked at, answered and cost.

Evidence ids are links: clicking one seeks the player to the frame the judge saw. Calls are
links too, opening the exact request (images shown as evidence ids) and the raw reply. A run
that offered continuity-scan windows lists them, each a link to its start, with the inspections
that looked at it.
"""

from __future__ import annotations

import html
import json

from PySide6.QtCore import QTimer, QUrl
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.gui.common import AnnotateState
from storage import JudgeRuns, RunAnswer, RunInspection, RunSubgoal, RunTrace

ANSWER_COLOR = {"yes": "#2e7d32", "no": "#c62828", "NA": "#6d6d6d"}
BLIND = (
    "<p style='color:gray'>Judge runs are hidden in the rater view: this project is in blind "
    "mode, so judge scores stay out of sight while rating. The lead shows them with "
    "Results → Unlock as Lead…</p>"
)


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}"


def _ev(ids: tuple[str, ...] | list[str]) -> str:
    return " ".join(f"<a href='ev:{html.escape(i)}'>{html.escape(i)}</a>" for i in ids)


def _subgoal_rows(plan: tuple[RunSubgoal, ...]) -> str:
    rows = []
    for s in plan:
        target = f" → {html.escape(s.target)}" if s.target else ""
        req = f" <i>requires {', '.join(s.requires)}</i>" if s.requires else ""
        end = (
            f"<br><span style='color:gray'>{html.escape(s.end_state)}</span>" if s.end_state else ""
        )
        rows.append(
            f"<tr><td><b>{s.sid}</b></td><td>{html.escape(s.action)} "
            f"{html.escape(s.source)}{target}{req}{end}</td></tr>"
        )
    return "<table cellspacing='4'>" + "".join(rows) + "</table>"


def _answer(a: RunAnswer) -> str:
    color = ANSWER_COLOR.get(a.answer, "#333")
    flag = " <b style='color:#ef6c00'>unresolved</b>" if a.unresolved else ""
    times = ", ".join(f"{t:.2f}s" for t in a.timestamps_s)
    note = f" — {html.escape(a.note)}" if a.note else ""
    return (
        f"<li><b>{a.sid}</b>: <b style='color:{color}'>{html.escape(a.answer)}</b>{flag} "
        f"{_ev(a.evidence_ids)} <span style='color:gray'>{times}</span>{note}</li>"
    )


def _call_status(ok: bool, error: str | None) -> str:
    return "ok" if ok else f"<b style='color:#c62828'>{html.escape(error or 'failed')}</b>"


def _continuity(config: dict[str, object], inspections: list[RunInspection]) -> str:
    """The continuity windows the run offered (``config["continuity"]``), or '' if none."""
    info = config.get("continuity")
    if not isinstance(info, dict):
        return ""
    items = []
    for w in info.get("offered") or []:
        a, b = float(w["start_s"]), float(w["end_s"])
        seen = [f"#{i.seq}" for i in inspections if i.start_s <= b and i.end_s >= a]
        looked = f" · inspected {' '.join(seen)}" if seen else " · not inspected"
        items.append(
            f"<li><a href='t:{a}'><b>{html.escape(str(w['id']))}</b> {a:.2f}–{b:.2f} s</a> "
            f"score {float(w['score']):.1f}{looked}<br>"
            f"<span style='color:gray'>{html.escape(str(w['reason']))}</span></li>"
        )
    total = info.get("scan_windows", len(items))
    head = (
        f"<h4>Continuity windows offered</h4><p style='color:gray'>{len(items)} of the scan's "
        f"{total} window(s), the strongest up to {config.get('continuity_windows')}, named at "
        "the Physics gates as suggested places to inspect (scan "
        f"{html.escape(str(info.get('scan_version', '?')))})</p>"
    )
    return head + (f"<ul>{''.join(items)}</ul>" if items else "<p>the scan found none</p>")


def render_trace(trace: RunTrace) -> str:
    """The whole trace as HTML (links: ``ev:<id>`` and ``call:<seq>``)."""
    run = trace.run
    parts = []
    rules = "".join(
        f"<tr><td>{html.escape(rule)}</td><td>T {_fmt(sc.get('T100'))}</td>"
        f"<td>P {_fmt(sc.get('P100'))}</td><td><b>S {_fmt(sc.get('S'))}</b></td></tr>"
        for rule, sc in (run.scores.get("rules") or {}).items()
        if isinstance(sc, dict)
    )
    tin, tout = trace.total_tokens
    status = html.escape(run.status) + (
        f" — <span style='color:#c62828'>{html.escape(run.error)}</span>" if run.error else ""
    )
    parts.append(
        f"<p><b>Run {run.id}</b> · {html.escape(run.model or '?')} · {html.escape(run.mode)} · "
        f"{status}<br>cost ${trace.total_cost_usd:.4f} · {tin}+{tout} tokens · "
        f"{len(trace.calls)} calls · {trace.total_latency_s:.1f} s in calls · "
        f"prompts {html.escape(run.prompt_version)}</p><table cellspacing='6'>{rules}</table>"
    )
    parts.append(f"<h4>Task plan</h4>{_subgoal_rows(trace.task_plan)}")
    if trace.physics_plan:
        parts.append(f"<h4>Physics windows</h4>{_subgoal_rows(trace.physics_plan)}")
    if trace.review:
        deps = "".join(
            f"<li><b>{s.sid}</b> requires {', '.join(s.requires) or 'nothing'}"
            f" <span style='color:gray'>{html.escape(s.reason)}</span></li>"
            for s in trace.review
        )
        parts.append(f"<h4>Dependency review</h4><ul>{deps}</ul>")
    parts.append(_continuity(run.config, [it.inspection for it in trace.inspections]))
    for g in trace.gates:
        parts.append(f"<h4>{g.gate}</h4><ul>{''.join(_answer(a) for a in g.rows)}</ul>")
    if trace.inspections:
        items = []
        for it in trace.inspections:
            ins = it.inspection
            roi = f" roi {tuple(round(v, 2) for v in ins.roi)}" if ins.roi else ""
            items.append(
                f"<li><b>#{ins.seq} {ins.gate}</b> {ins.start_s:.2f}–{ins.end_s:.2f} s{roi}, "
                f"{ins.n_frames} frames: {html.escape(ins.question)}<br>"
                f"<span style='color:gray'>expects: {html.escape(ins.expected_evidence)}</span>"
                f"<br>returned {_ev(ins.evidence_ids)}</li>"
            )
        parts.append(f"<h4>Inspections</h4><ul>{''.join(items)}</ul>")
    calls = "".join(
        f"<tr><td><a href='call:{c.seq}'>#{c.seq}</a></td><td>{html.escape(c.stage)}</td>"
        f"<td>{_call_status(c.ok, c.error)}</td><td>{c.latency_s:.2f} s</td>"
        f"<td>{c.tokens_in}+{c.tokens_out}</td><td>${c.cost_usd:.5f}</td></tr>"
        for c in trace.calls
    )
    parts.append(f"<h4>Calls</h4><table cellspacing='4'>{calls}</table>")
    return "".join(parts)


class TraceView(QWidget):
    """Runs of the current video, newest first, and the selected run's trace (none of it in a
    rater's view of a blind project: :meth:`set_blind`)."""

    def __init__(self, state: AnnotateState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.trace: RunTrace | None = None
        self.blind = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        top.addWidget(QLabel("Run"))
        self.runs = QComboBox(self)
        self.runs.currentIndexChanged.connect(lambda _i: self.show_run())
        top.addWidget(self.runs, 1)
        lay.addLayout(top)
        self.view = QTextBrowser(self)
        self.view.setOpenLinks(False)
        self.view.anchorClicked.connect(self._link)
        lay.addWidget(self.view, 1)
        state.video_changed.connect(self.refresh)
        state.project_changed.connect(self.refresh)
        self.timer = QTimer(self)  # follow a run that is still going
        self.timer.setInterval(2000)
        self.timer.timeout.connect(self._poll)
        self.refresh()

    def _store(self) -> JudgeRuns | None:
        project = self.state.project
        return None if project is None else JudgeRuns(project.db)

    def set_blind(self, blind: bool) -> None:
        """Rater view of a blind project: no run, score or judge model is listed or kept."""
        self.blind = blind
        self.refresh()

    def refresh(self) -> None:
        store, video = self._store(), self.state.video
        self.runs.blockSignals(True)
        self.runs.clear()
        if self.blind:
            self.runs.blockSignals(False)
            self.trace = None
            self.timer.stop()
            self.view.setHtml(BLIND)
            return
        if store is not None and video is not None:
            for run in sorted(store.runs(video.id), key=lambda r: r.id, reverse=True):
                s = "" if run.s is None else f" S {run.s:.1f}"
                self.runs.addItem(f"#{run.id} {run.mode} · {run.status}{s}", run.id)
        self.runs.blockSignals(False)
        self.show_run()

    def show_run(self) -> None:
        store, run_id = self._store(), self.runs.currentData()
        if store is None or run_id is None:
            self.trace = None
            self.view.setHtml(
                "<p style='color:gray'>No judge run for this video yet. "
                "Judge → Judge Videos… (Ctrl+J) queues one.</p>"
            )
            self.timer.stop()
            return
        self.trace = store.trace(int(run_id))
        self.view.setHtml(render_trace(self.trace))
        if self.trace.run.status == "running":
            self.timer.start()
        else:
            self.timer.stop()

    def _poll(self) -> None:
        pos = self.view.verticalScrollBar().value()
        self.show_run()
        self.view.verticalScrollBar().setValue(pos)

    def _link(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        if self.trace is None:
            return
        if kind == "ev":
            frame = self.trace.frame(value)
            if frame is not None:
                self.state.seek(frame.frame_index)
        elif kind == "t" and self.state.project is not None and self.state.video is not None:
            index = self.state.project.video_index(self.state.video)
            self.state.seek(index.index_at(float(value)))
        elif kind == "call":
            self._show_call(int(value))

    def _show_call(self, seq: int) -> None:
        store = self._store()
        if store is None or self.trace is None:
            return
        call = store.call_detail(self.trace.run.id, seq)
        dlg = QDialog(self)
        dlg.setWindowTitle(f"Call #{seq}: {call.stage}")
        dlg.resize(820, 640)
        text = QPlainTextEdit(dlg)
        text.setReadOnly(True)
        text.setPlainText(
            f"prompt version: {call.prompt_version}\nok: {call.ok}  error: {call.error}\n"
            f"latency {call.latency_s:.2f} s · tokens {call.tokens_in}+{call.tokens_out} · "
            f"${call.cost_usd:.5f}\n\n--- request ---\n"
            + json.dumps(call.request, indent=2)
            + "\n\n--- reply ---\n"
            + call.reply
        )
        QVBoxLayout(dlg).addWidget(text)
        dlg.exec()
