"""Exceptions that mean "the user gave us something we cannot use" (no traceback)."""

from __future__ import annotations

from judge import QueueError
from sim.scenario import ScenarioError
from sim.world import ActionFormatError, LayoutError
from storage import (
    AnnotationError,
    BundleError,
    CaseImportError,
    EpisodeError,
    ProjectError,
    SchemaTooNewError,
    StudyError,
)
from storage.media import MediaError

USER_ERRORS: tuple[type[Exception], ...] = (
    AnnotationError,
    CaseImportError,
    MediaError,
    ProjectError,
    SchemaTooNewError,
    FileNotFoundError,
    QueueError,
    StudyError,
    BundleError,
    ScenarioError,
    EpisodeError,
    LayoutError,
    ActionFormatError,
)
