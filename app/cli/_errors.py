"""Exceptions that mean "the user gave us something we cannot use" (no traceback)."""

from __future__ import annotations

from judge import QueueError
from storage import (
    AnnotationError,
    BundleError,
    CaseImportError,
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
)
