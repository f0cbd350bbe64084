"""Two diagnostic job kinds that need nothing but the queue.

``diag.sleep`` is a cancellable job of known length (health checks, and tests of leases and
heartbeats); ``diag.echo`` finishes at once; ``diag.task`` is a remote kind (it runs on a
cluster with ``worker --ray``) that does no work: the driver's own cost, measured.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from storage._project import Project
from storage.jobs._registry import register
from storage.jobs._remote import Channel, RemoteTask
from storage.jobs._types import JobContext, JobError, JobOutcome

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


# ---- a diagnostic remote kind: what a cluster executor runs, with no real work -----------------


def _diag_task(inputs: Mapping[str, Any], files: Mapping[str, Path], channel: Channel) -> Any:
    """Sleep ``seconds`` (cancellable), read the named files and environment variable, and say
    where it ran: the driver's overhead per task, and the plumbing, measured with no work."""
    seconds = float(inputs.get("seconds", 0.0))
    began = time.time()
    if inputs.get("pid_file"):  # where a test finds the process to kill
        Path(str(inputs["pid_file"])).write_text(str(os.getpid()))
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if channel.cancelled():
            raise JobError("diag.task: cancelled")
        channel.progress((time.monotonic() - start) / seconds, "sleeping")
        time.sleep(min(_SLEEP_STEP_S, seconds))
    for k in range(int(inputs.get("events", 0))):
        channel.event({"n": k})
    env = str(inputs.get("env") or "")
    return {
        "n": inputs.get("n"),
        "pid": os.getpid(),
        "files": {name: hashlib.sha256(p.read_bytes()).hexdigest() for name, p in files.items()},
        "env_set": bool(env and os.environ.get(env)),
        "began": began,
        "ended": time.time(),
    }


@register("diag.task", remote=True)
def prepare_diag_task(ctx: JobContext, project: Project) -> RemoteTask:
    payload = dict(ctx.payload)
    files = {}
    for name, sha in dict(payload.pop("files", {}) or {}).items():
        files[name] = (str(sha), project.media_path(str(sha)))
    env = str(payload.get("env") or "")

    def finish(result: Any) -> JobOutcome:
        ref = "task:" + json.dumps(result, sort_keys=True)  # the result, as the job's reference
        return JobOutcome(write=lambda _p: ref)

    return RemoteTask(fn=_diag_task, inputs=payload, finish=finish, files=files,
                      env=(env,) if env else (), cpus=float(payload.get("cpus", 1.0)))  # fmt: skip
