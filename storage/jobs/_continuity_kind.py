"""The ``continuity.scan`` job kind.

Payload: ``{"sha256": <the media file's sha256>}``. The job decodes the project's copy of the
file, scans it (:func:`storage.media.continuity.scan_video`) and stores the scan in the
transaction that marks the job done. A file that already has a scan of the current version is a
no-op, so queueing twice, or a scan made at import meanwhile, costs nothing.

It is registered when ``storage`` is imported (as the diagnostic kinds are), so every worker
hosts it whatever else it loads. Queueing and import's inline scans are
:mod:`storage._continuity_scans`'s.
"""

from __future__ import annotations

from storage._continuity_scans import CONTINUITY_KIND
from storage._project import Project
from storage.jobs._registry import register
from storage.jobs._types import JobContext, JobError, JobOutcome
from storage.media import MediaError
from storage.media.continuity import scan_video


def _ref(sha256: str) -> str:
    return f"continuity_scans:{sha256}"


@register(CONTINUITY_KIND)
def continuity_scan_job(ctx: JobContext) -> JobOutcome:
    """Scan the payload's file and store the scan; nothing to do if it has a current one."""
    sha = ctx.payload.get("sha256")
    if not isinstance(sha, str) or not sha:
        raise JobError("continuity.scan: payload field 'sha256' must name a media file")
    with Project.open(ctx.project_root) as project:
        if project.continuity.get(sha) is not None:
            ctx.log("continuity.current")

            def nothing(_p: Project) -> str:
                return _ref(sha)

            return JobOutcome(write=nothing)
        row = project.db.execute(
            "SELECT rel_path FROM media WHERE sha256 = ? AND kind = 'video'", [sha]
        ).fetchone()
        if row is None:
            raise JobError(f"continuity.scan: no video file {sha[:12]}… in this project")
        path = project.media_dir / str(row[0])
    ctx.progress(0.0, "scanning every frame")
    try:
        scan = scan_video(path)
    except MediaError as err:  # the same bytes will not decode on another attempt either
        raise JobError(f"continuity.scan: {err}") from None

    def save(p: Project) -> str:
        p.continuity.save(sha, scan)
        return _ref(sha)

    return JobOutcome(write=save)
