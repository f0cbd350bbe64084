"""What each Results view says when it has nothing to show: what is missing, and the next step.

An empty table or a blank chart reads as "broken" or "zero"; a sentence in its place says which
input is missing (ratings, a second rater, a judge run) and where in the window to make it,
with the menu and key of that command taken from the command table.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

from app.gui.common import where
from storage import AgreementReport

NOT_COMPUTED = "Not computed yet: press Compute (it runs in the background)."
COMPUTING = "Computing…"
BLIND = (
    "Hidden in the rater view: this project is in blind mode, so results, judge scores and "
    "generators stay out of sight while rating. The lead shows them with Results → Unlock as "
    "Lead…"
)


def _rate_next() -> str:
    return (
        f"Next: rate a video in the Annotate workspace ({where('view.annotate')}): add its "
        f"subgoals ({where('subgoal.add')}) and answer every gate they reach, then Compute."
    )


def _judge_next() -> str:
    return (
        f"Next: {where('judge.run')} queues the videos, and a worker runs them "
        f"({where('jobs.workers')})."
    )


def failed(reason: str) -> dict[str, str]:
    """Every view's sentence when the report could not be computed (``reason``: the core's)."""
    reason = reason.rstrip(".")
    return {
        "board": f"No leaderboard yet — {reason}. {_rate_next()}",
        "agreement": f"No agreement figures yet — {reason}. {_rate_next()}",
        "scatter": f"Nothing to plot yet — {reason}. {_rate_next()}",
        "queue": f"No disagreements to rank yet — {reason}. {_rate_next()}",
    }


def board_note(res: AgreementReport) -> str | None:
    if res.leaderboard.models:
        return None
    return (
        "No generator to rank: none of the rated videos was imported with a generator model "
        "(the leaderboard ranks generated videos; human recordings are not ranked). "
        f"{_rate_next()}"
    )


def agreement_note(res: AgreementReport) -> str | None:
    if res.agreement.rows:
        return None
    return f"No agreement figures for this panel. {_rate_next()}"


def scatter_note(res: AgreementReport, judge: str | None, axis: str, points: int) -> str | None:
    if not res.data.evaluators:
        return (
            "No judge runs yet: each video a judge has scored is a point here against the "
            f"human consensus. {_judge_next()}"
        )
    if points:
        return None
    return (
        f"No video has both a human consensus and a {axis} score from {judge}: judge the rated "
        f"videos ({where('judge.run')}), or rate the videos this judge has scored."
    )


def queue_note(res: AgreementReport, rows: int) -> str | None:
    """The queue ranks by |judge − consensus|, then by the raters' spread: with no row, no
    video has a judge score beside a consensus, nor two ratings."""
    if rows:
        return None
    judge = "no judge run yet" if not res.data.evaluators else "no judge has scored a rated video"
    return (
        f"Nothing to rank: {judge}, and no video has two ratings to compare. Next: judge the "
        f"rated videos ({where('judge.run')}), or have a second rater rate them (each rater "
        "starts the workbench with WB_RATER set to their own id)."
    )


class Placeheld(QStackedWidget):
    """A view, or in its place a sentence saying why it is empty and what to do next."""

    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.content = content
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note.setMargin(24)
        self.note.setStyleSheet("color: palette(mid); font-size: 13px;")
        self.addWidget(content)
        self.addWidget(self.note)

    def show_note(self, text: str | None) -> None:
        """``text`` in place of the view, or the view itself when ``text`` is None."""
        if text is None:
            self.setCurrentWidget(self.content)
        else:
            self.note.setText(text)
            self.setCurrentWidget(self.note)
