"""The annotate workspace of the window."""

from __future__ import annotations

from app.gui.annotate._workspace import AnnotateWorkspace

__all__ = ["AnnotateWorkspace"]
