"""Two diagnostic job kinds that need nothing but the queue.

``diag.sleep`` is a cancellable job of known length (health checks, and tests of leases and
heartbeats); ``diag.echo`` finishes at once.
"""

from __future__ import annotations

import json
import time

from storage._jobkind import JobContext, JobError, JobOutcome
from storage._kinds import register
from storage._project import Project

# ---- diagnostic kinds ------------------------------------------------------------------------
_SLEEP_STEP_S = 0.05  # how quickly diag.sleep notices a cancellation


@register("diag.sleep")
def diag_sleep(ctx: JobContext) -> JobOutcome:
    """Sleep ``payload["seconds"]`` in small steps, reporting progress; result ``diag:<n>``."""
    try:
        seconds = float(ctx.payload.get("seconds", 0.0))
        n = int(ctx.payload.get("n", ctx.job_id))
    except (TypeError, ValueError):
        # The values themselves stay out of the message: payloads may carry secrets.
        raise JobError("diag.sleep: payload 'seconds' and 'n' must be numbers") from None
    start = time.monotonic()
    while (elapsed := time.monotonic() - start) < seconds:
        if ctx.cancelled():
            raise JobError("diag.sleep: cancelled")
        ctx.progress(elapsed / seconds, f"slept {elapsed:.1f} of {seconds:.1f} s")
        time.sleep(min(_SLEEP_STEP_S, seconds - elapsed))
    ref = f"diag:{n}"

    def write(_project: Project) -> str:
        return ref

    return JobOutcome(write=write)


@register("diag.echo")
def diag_echo(ctx: JobContext) -> JobOutcome:
    """Finish at once; the result reference is ``echo:`` plus the payload as JSON."""
    ref = "echo:" + json.dumps(dict(ctx.payload), sort_keys=True)

    def write(_project: Project) -> str:
        return ref

    return JobOutcome(write=write)
