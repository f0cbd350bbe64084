"""``workbench worker --ray``: the project's queue run on a Ray cluster, the project still the
one source of truth.

The driver is the local worker (:mod:`storage.jobs._worker`) with one difference: a job of a
remote kind (registered with ``remote=True``) is prepared here, executed as a Ray task, and
finished here. Everything that makes the queue safe stays where it was: the claim, the lease
and its heartbeats, cancellation, the attempt budget, the spend cap and the exactly-once write
are the driver's, on its own SQLite connections; Ray workers never open the project.

- **Files** a task reads go to the object store once per driver, by sha256
  (:class:`_Objects`); a task writes them to a node-local cache folder named by the hash.
- **Secrets**: a task's API key reaches it only as an environment variable of the process it
  runs in, inherited from the node (``ray start`` run with the key set, or, for ``--ray
  local``, this driver's own environment); the driver sends only the variable's *name*. Not
  ``runtime_env.env_vars``: Ray's runtime-environment agent logs those values in clear at INFO
  (``runtime_env_agent.log``, measured with Ray 2.60). A task whose node lacks the variable
  fails for good, naming the node and the variable, before it does any work.
- **Events and progress** travel through one small actor (:class:`_Mailbox`) that tasks post to
  and the driver drains; cancellation goes the other way through the same actor, and a task
  that does not stop in time is cancelled by Ray.
- **Faults**: tasks run with ``max_retries=0``: a worker or node that dies mid-task fails the
  job *retryably*, and the queue's attempt budget and backoff decide (as for a local worker
  that crashed). A result that comes back after its job was cancelled is dropped by the
  completion check, like a local one.
- **Back-pressure**: at most ``max_in_flight`` tasks per driver (one runner thread each).

Ray is an optional extra (``pip install rollout-workbench[cluster]``); without it ``--ray``
is a :class:`ClusterUnavailableError` that says how to install it.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict, deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from annotation import UserError
from storage._project import Project
from storage.jobs._registry import get_kind
from storage.jobs._remote import RemoteTask, failed
from storage.jobs._types import JobError, JobOutcome

POLL_S = 0.05  # how often a runner looks at its task and its mailbox
CANCEL_GRACE_S = 5.0  # after a cancel, how long a task may take to notice before Ray kills it
CACHE = "wb-ray-files"  # node-local folder (under the temp dir) of files by sha256


class ClusterUnavailableError(UserError):
    """``--ray`` without Ray installed, or a cluster that cannot be reached."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ClusterUnavailableError(
            "running on a cluster needs Ray: pip install 'rollout-workbench[cluster]' "
            "(or pip install 'ray>=2.9')"
        ) from None
    return ray


def connect(address: str, *, cpus: int | None = None) -> Any:
    """Join the cluster at ``address`` (``local``: start one in this process, on loopback)."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    try:
        if address == "local":
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                     configure_logging=False, _node_ip_address="127.0.0.1")  # fmt: skip
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise ClusterUnavailableError(f"cannot reach the Ray cluster at {address}: {err}") from None
    return ray


# ---- what runs on the cluster ------------------------------------------------------------------


def _mailbox_class(ray: Any) -> Any:
    @ray.remote(num_cpus=0)
    class _Mailbox:
        """Events and progress from tasks to the driver; cancellations the other way. One
        call at a time (each is a dict operation): a threaded actor measured 30 ms a call."""

        def __init__(self) -> None:
            self.items: dict[int, list[Any]] = defaultdict(list)
            self.cancelled: set[int] = set()

        def post(self, job_id: int, item: Any) -> None:
            self.items[job_id].append(item)

        def take(self, job_ids: list[int]) -> dict[int, list[Any]]:
            return {j: self.items.pop(j) for j in job_ids if j in self.items}

        def cancel(self, job_id: int) -> None:
            self.cancelled.add(job_id)

        def is_cancelled(self, job_id: int) -> bool:
            return job_id in self.cancelled

        def forget(self, job_id: int) -> None:
            self.items.pop(job_id, None)
            self.cancelled.discard(job_id)

    return _Mailbox


_MAILBOXES: dict[tuple[str, str], Any] = {}  # per cluster session: an actor takes ~0.5 s to start


def _mailbox(ray: Any) -> Any:
    # The job id alone repeats across clusters (a shut-down and re-started local one is
    # "01000000" again) and a dead cluster's actor handle aborts the process: the driver's
    # node id is new for each cluster.
    context = ray.get_runtime_context()
    session = (context.get_job_id(), context.get_node_id())
    if session not in _MAILBOXES:
        _MAILBOXES[session] = _mailbox_class(ray).remote()
    return _MAILBOXES[session]


class _TaskChannel:
    """The :class:`~storage.jobs._remote.Channel` a task gets. Posts to the mailbox actor without
    waiting (calls from one task reach the actor in order); :meth:`flush` waits for the last,
    so everything a task posted is in the mailbox before its result is."""

    def __init__(self, mailbox: Any, job_id: int) -> None:
        self._mailbox, self._job = mailbox, job_id
        self._cancelled = False
        self._last_progress = self._last_ask = 0.0
        self._last: Any = None

    def post(self, item: Any) -> None:
        self._last = self._mailbox.post.remote(self._job, item)

    def flush(self) -> None:
        if self._last is not None:
            import ray

            ray.get(self._last)
            self._last = None

    def progress(self, fraction: float, note: str = "", cost_usd: float | None = None) -> None:
        now = time.monotonic()
        if now - self._last_progress >= 0.25:  # throttled, as the local worker's heartbeat is
            self._last_progress = now
            self.post(("progress", fraction, note, cost_usd))

    def event(self, event: Any) -> None:
        self.post(("event", event))

    def cancelled(self) -> bool:
        now = time.monotonic()
        if not self._cancelled and now - self._last_ask >= 0.1:  # a round trip: not every call
            import ray

            self._last_ask = now
            self._cancelled = bool(ray.get(self._mailbox.is_cancelled.remote(self._job)))
        return self._cancelled


def _local_files(files: Mapping[str, tuple[str, Any]]) -> dict[str, Path]:
    """Each (sha256, bytes ref) as a file in this node's cache (written once per node)."""
    import tempfile

    import ray

    folder = Path(tempfile.gettempdir()) / CACHE
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, (sha, ref) in files.items():
        path = folder / sha
        if not path.exists():
            data = ray.get(ref)
            tmp = folder / f".{sha}.{os.getpid()}.part"
            tmp.write_bytes(data)
            tmp.replace(path)  # atomic: a reader never sees half a file
        out[name] = path
    return out


def _execute(fn: Any, inputs: Mapping[str, Any], files: Mapping[str, tuple[str, Any]],
             mailbox: Any, job_id: int, env: tuple[str, ...] = ()) -> Any:  # fmt: skip
    """The Ray task: report where it runs, check its environment, fetch its files, run."""
    import socket

    import ray

    where = f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()[:8]}"
    channel = _TaskChannel(mailbox, job_id)
    channel.post(("node", where))
    try:
        missing = [name for name in env if not os.environ.get(name)]
        if missing:
            raise JobError(f"node {where} has no {', '.join('$' + m for m in missing)} in its "
                           "environment: start its `ray start` with the key set")  # fmt: skip
        return fn(inputs, _local_files(files), channel)
    finally:
        channel.flush()


# ---- the driver's side -------------------------------------------------------------------------


class _Objects:
    """Files in the object store by sha256: each put once for the driver's life."""

    def __init__(self, ray: Any, log: Any) -> None:
        self._ray, self._log, self._lock = ray, log, threading.Lock()
        self._refs: dict[str, Any] = {}

    def ref(self, sha: str, path: Path) -> Any:
        with self._lock:
            if sha not in self._refs:
                self._refs[sha] = self._ray.put(path.read_bytes())
                self._log("debug", "ray.object_put", sha256=sha, bytes=path.stat().st_size)
            return self._refs[sha]

    @property
    def count(self) -> int:
        return len(self._refs)


class RayExecutor:
    """Runs one claimed job: remote kinds on Ray, any other kind here (the diagnostic ones)."""

    def __init__(self, ray: Any, root: Path, log: Any) -> None:
        self.ray, self.root, self.log = ray, root, log
        self.mailbox = _mailbox(ray)
        self.objects = _Objects(ray, log)
        self.remote = ray.remote(_execute)
        self.nodes: dict[int, str] = {}  # job id -> where its task ran
        self._pending: dict[int, deque[Any]] = {}

    def __call__(self, kind: str, rec: Any) -> JobOutcome:
        registered = get_kind(kind)
        prepare = registered.prepare
        if prepare is None:  # a local kind runs on the driver's own runner thread
            return registered.run(rec)
        project: Project = rec.project  # the runner's own connection: this thread's
        task = prepare(rec, project)
        if isinstance(task, JobOutcome):
            return task
        try:
            result = self._run(rec, project, task)
        except JobError as err:
            failed(project, task, err)
            raise
        return task.finish(result)

    def _run(self, rec: Any, project: Project, task: RemoteTask) -> Any:
        ray = self.ray
        files = {n: (sha, self.objects.ref(sha, p)) for n, (sha, p) in task.files.items()}
        options: dict[str, Any] = {"num_cpus": task.cpus, "max_retries": 0}
        job_id = rec.job_id
        ref = self.remote.options(**options).remote(task.fn, task.inputs, files, self.mailbox,
                                                    job_id, tuple(task.env))  # fmt: skip
        cancel_at: float | None = None
        try:
            while True:
                ready, _ = ray.wait([ref], timeout=POLL_S)
                if ready:
                    break
                self._drain(rec, project, task)
                if cancel_at is None and rec.cancelled():
                    self.mailbox.cancel.remote(job_id)
                    cancel_at = time.monotonic() + CANCEL_GRACE_S
                elif cancel_at is not None and time.monotonic() > cancel_at:
                    ray.cancel(ref, force=True)
                    raise JobError("cancelled: the task did not stop in time")
            try:
                return ray.get(ref)
            except ray.exceptions.RayTaskError as err:
                cause = (
                    err.cause if isinstance(getattr(err, "cause", None), BaseException) else None
                )
                if isinstance(cause, JobError | UserError):
                    raise (cause if isinstance(cause, JobError) else JobError(str(cause))) from None
                raise JobError(f"the task crashed on the cluster: {err}") from None
            except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                    ray.exceptions.TaskCancelledError, ray.exceptions.ObjectLostError,
                    ray.exceptions.RaySystemError) as err:  # fmt: skip
                raise JobError(f"the task's Ray worker died: {type(err).__name__}",
                               retry=True) from None  # fmt: skip
        finally:
            self._drain(rec, project, task)
            self.mailbox.forget.remote(job_id)

    def _drain(self, rec: Any, project: Project, task: RemoteTask) -> None:
        items = self.ray.get(self.mailbox.take.remote([rec.job_id])).get(rec.job_id, [])
        for item in items:
            if item[0] == "node":
                self.nodes[rec.job_id] = str(item[1])
                rec.ran_on(str(item[1]))
            elif item[0] == "progress":
                rec.progress(item[1], item[2], item[3])
            elif item[0] == "event" and task.on_event is not None:
                task.on_event(project, item[1])
