"""The common pieces shared by the workspaces of the window."""

from __future__ import annotations

from app.gui.common._bridge import Bridge
from app.gui.common._commands import (
    COMMANDS,
    effective_keys,
    load_overrides,
    save_overrides,
    where,
)
from app.gui.common._errors import ErrorBoundary
from app.gui.common._frame_view import FrameView
from app.gui.common._frames import FrameFeed
from app.gui.common._help import ShortcutEditor, ShortcutOverlay, about_text
from app.gui.common._importer import CaseImporter
from app.gui.common._layouts import LayoutError, Layouts, read_layouts, write_layouts
from app.gui.common._project_watch import ProjectWatch
from app.gui.common._roles import Blindable, Roles
from app.gui.common._scroll import VerticalScroll
from app.gui.common._state import AnnotateState
from app.gui.common._timeline import Mark, Timeline
from app.gui.common._workers import LocalWorkers

__all__ = [
    "COMMANDS",
    "AnnotateState",
    "Blindable",
    "Bridge",
    "CaseImporter",
    "ErrorBoundary",
    "FrameFeed",
    "FrameView",
    "LayoutError",
    "Layouts",
    "LocalWorkers",
    "Mark",
    "ProjectWatch",
    "Roles",
    "ShortcutEditor",
    "ShortcutOverlay",
    "Timeline",
    "VerticalScroll",
    "about_text",
    "effective_keys",
    "load_overrides",
    "read_layouts",
    "save_overrides",
    "where",
    "write_layouts",
]
