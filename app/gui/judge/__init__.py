"""The judge workspace of the window."""

from __future__ import annotations

from app.gui.judge._dialog import JudgeDialog
from app.gui.judge._jobs_panel import JobsPanel
from app.gui.judge._trace_view import TraceView

__all__ = ["JobsPanel", "JudgeDialog", "TraceView"]
