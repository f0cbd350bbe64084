"""The results workspace of the window."""

from __future__ import annotations

from app.gui.results._workspace import ResultsPanel

__all__ = ["ResultsPanel"]
