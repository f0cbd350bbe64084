"""Exceptions that mean "the user gave us something we cannot use" (no traceback)."""

from __future__ import annotations

from judge import QueueError
from storage import AnnotationError, CaseImportError, ProjectError, SchemaTooNewError
from storage.media import MediaError

USER_ERRORS: tuple[type[Exception], ...] = (
    AnnotationError,
    CaseImportError,
    MediaError,
    ProjectError,
    SchemaTooNewError,
    FileNotFoundError,
    QueueError,
)
