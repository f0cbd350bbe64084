"""Offline study bundles: a blind assignment out to a rater, the rater's work back to the lead.

- ``_format``: the ``.wbz`` file itself (manifest, member hashes, payloads) and its checks;
  :class:`BundleError` for a bundle that cannot be used.
- ``_assignment``: lead → rater. :func:`export_assignment` writes a rater's blinded videos and
  cases; :func:`open_assignment` turns the bundle into a rater project.
- ``_work``: rater → lead. :func:`export_work` packs a rater project's work; :func:`import_work`
  merges it into the lead project under that rater only.
- ``_merge``: the rater's work as comparable items and the three-way merge's conflict rules.

The videos are copied without their metadata by :func:`storage.media.blind_copy`; ``storage``
re-exports every public name here.
"""

from storage.bundles._assignment import (
    AssignmentExport,
    BundleOrigin,
    OpenedAssignment,
    bundle_origin,
    export_assignment,
    open_assignment,
)
from storage.bundles._format import BundleError
from storage.bundles._merge import Conflict
from storage.bundles._work import (
    MergeConflictError,
    MergeReport,
    WorkExport,
    export_work,
    import_work,
)

__all__ = [
    "AssignmentExport",
    "BundleError",
    "BundleOrigin",
    "Conflict",
    "MergeConflictError",
    "MergeReport",
    "OpenedAssignment",
    "WorkExport",
    "bundle_origin",
    "export_assignment",
    "export_work",
    "import_work",
    "open_assignment",
]
