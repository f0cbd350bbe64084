"""Queue a batch and run its episodes as ``sim.episode`` jobs, each stored exactly once.

:func:`queue_batch` plans the batch, queues one job per planned episode and links them, all in
one transaction: a batch is queued whole or not at all. The job's payload only points at its
planned run (``{"batch_id", "cell", "run"}``); what to run is read from the stored manifest, so
the plan the user saw is the plan that runs.

The job is a remote kind (:mod:`storage.jobs._remote`), so a laptop's worker and a Ray cluster run
the same code:

- :func:`prepare_episode`, where the project is: reads the batch, its planned run and
  manifest, and everything the episode would otherwise read from the project: a scenario file
  and an arm profile's files go by sha256 (sent once per cluster), the model profiles of LLM
  participants as their stored configs, with the *names* of their key variables (a key
  reaches a task only from its node's environment);
- :func:`run_episode_task`, anywhere, with no project: runs the interactive (or agent)
  episode with deferred sinks and returns it whole as data (:class:`sim.episode.DeferredEpisode`);
- ``finish``: a :class:`JobOutcome` whose ``write`` stores the episode, links it to its planned
  run, and stores its metrics and proposed failure attribution — inside the transaction that
  marks the job done.

A worker (or Ray task) killed mid-episode therefore leaves nothing behind and the job runs again
from the start; a job that finds its run already stored (a stale re-run) stores nothing; and
:meth:`storage.Batches.store_episode` refuses a second episode for one run, which rolls the
whole transaction back.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from annotation import UserError
from sim.batch._attribution import store_attribution
from sim.batch._manifest import (
    AGENT_KINDS,
    Manifest,
    ManifestError,
    Participant,
    parse_manifest,
    plan_cells,
)
from sim.episode import (
    ARMS,
    BaseSink,
    DeferredEpisode,
    EpisodeRunner,
    ResolvedArm,
    open_scenario,
    resolve_arm,
    run_arm,
)
from sim.interact import ASSISTANTS, USERS, build_interactive, store_episode_metrics
from sim.scenario import BoundScenario, shipped
from storage import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RATE_LIMIT_BACKOFF_S,
    DEFAULT_RETRY_BACKOFF_S,
    Channel,
    JobContext,
    JobError,
    JobOutcome,
    Project,
    RemoteTask,
    register,
)

EPISODE_KIND = "sim.episode"
PROGRESS_EVERY = 200  # ticks between progress reports and cancellation checks
ARM_CACHE = "wb-ray-arms"  # node-local folder (under the temp dir) of arm profiles, by digest

#: run after an episode is stored, in the same transaction: ``(project, episode_id)``
AfterStore = Callable[[Project, str], None]


def _store_metrics(project: Project, episode_id: str) -> None:
    if project.episodes.get(episode_id).config.get("interactive"):  # IVG metrics need talk
        store_episode_metrics(project, episode_id)


AFTER_STORE: list[AfterStore] = [_store_metrics, store_attribution]


def ensure_references(project: Project, manifest: Manifest) -> list[str]:
    """A stored reference rollout per scenario in the manifest's mode (T_ref for in-time
    success); runs the missing ones (scripted reference plan, no anomalies). Returns their ids."""
    from sim.episode import run_episode

    made = []
    for name in manifest.scenarios:
        bound = open_scenario(name)
        have = [
            r for r in project.episodes.list(scenario=bound.name, reference=True)
            if r.scenario_sha == bound.scenario.digest and r.mode.value == manifest.mode
            and r.t_ref is not None
        ]  # fmt: skip
        if manifest.mode == "physics":  # the reference of the arm the batch runs
            want = _arm_label(manifest, bound, project)
            have = [r for r in have if str(r.config.get("arm") or "wb6") == want]
        if not have:
            ep = run_episode(bound, mode=manifest.mode, project=project, reference=True,
                             anomalies=False, arm=manifest.arm)  # fmt: skip
            if ep.episode_id is not None:
                made.append(ep.episode_id)
    return made


def _arm_label(manifest: Manifest, bound: BoundScenario, project: Project) -> str:
    """The label episodes of this batch's arm record (``wb6``, ``lab-six@2``)."""
    from sim.episode import DEFAULT_ARM, resolve_arm

    name = manifest.arm or bound.scenario.arm or DEFAULT_ARM
    return resolve_arm(name, project).label


def queue_batch(
    project: Project, manifest: Manifest, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    retry_backoff_s: float = DEFAULT_RETRY_BACKOFF_S,
    rate_limit_backoff_s: float = DEFAULT_RATE_LIMIT_BACKOFF_S,
) -> tuple[str, list[int]]:  # fmt: skip
    """Plan the batch and queue one job per planned episode; returns the batch id and job ids.

    A participant option naming a model ``profile`` the project lacks is refused first.
    ``max_attempts``, ``retry_backoff_s`` (an endpoint down, timing out or answering 5xx) and
    ``rate_limit_backoff_s`` (HTTP 429): each job's, as :meth:`storage.Jobs.enqueue`.
    """
    named = [(f"assistants[{k}]", a) for k, a in enumerate(manifest.assistants)]
    named += [(f"agents[{k}]", a) for k, a in enumerate(manifest.agents)]
    for field, a in [*named, ("user", manifest.user)]:
        profile = a.options.get("profile")
        if profile is not None and profile not in project.profiles:
            raise ManifestError(
                f"manifest {manifest.name!r}: {field}.options.profile: no model profile "
                f"{profile!r} in {project.root} (profiles: "
                f"{', '.join(project.profiles.list()) or 'none yet'})"
            )
    for k, a in enumerate(manifest.agents):  # its options, before anything is queued
        try:
            AGENT_KINDS[a.kind](_model_profiles(project, [a]), a.options)
        except UserError as err:
            raise ManifestError(f"manifest {manifest.name!r}: agents[{k}]: {err}") from None
    if manifest.arm is not None and manifest.mode == "physics":
        from sim.episode import resolve_arm

        try:  # a profile the project lacks (or whose files changed): before anything is queued
            resolve_arm(manifest.arm, project, where=f"manifest {manifest.name!r}: arm")
        except UserError as err:
            raise ManifestError(str(err)) from None
    cells = plan_cells(manifest)
    ensure_references(project, manifest)
    with project.transaction():
        batch_id = project.batches.create(manifest.name, manifest.to_json(), cells)
        payloads = [{"batch_id": batch_id, "cell": c.cell, "run": c.run} for c in cells]
        job_ids = project.jobs.enqueue(EPISODE_KIND, payloads, batch=batch_id,
                                       max_attempts=max_attempts,
                                       retry_backoff_s=retry_backoff_s,
                                       rate_limit_backoff_s=rate_limit_backoff_s)  # fmt: skip
        project.batches.set_jobs(
            batch_id, {(c.cell, c.run): j for c, j in zip(cells, job_ids, strict=True)}
        )
    return batch_id, job_ids


def _payload(payload: Mapping[str, Any]) -> tuple[str, int, int]:
    batch_id, cell, run = payload.get("batch_id"), payload.get("cell"), payload.get("run")
    if not isinstance(batch_id, str) or not batch_id:
        raise JobError(f"{EPISODE_KIND}: payload field 'batch_id' must be a batch id")
    for name, value in (("cell", cell), ("run", run)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise JobError(f"{EPISODE_KIND}: payload field {name!r} must be an int >= 0")
    assert isinstance(cell, int) and isinstance(run, int)
    return batch_id, cell, run


# ---- on the holder of the project: what the episode needs, and storing what it made ---------


@register(EPISODE_KIND, remote=True)
def prepare_episode(ctx: JobContext, project: Project) -> RemoteTask | JobOutcome:
    """Read everything one planned episode needs from the project (see the module
    docstring); a run stored already is done."""
    batch_id, cell, run = _payload(ctx.payload)
    try:
        return _prepare(project, batch_id, cell, run)
    except UserError as err:  # a manifest, scenario, arm or profile that cannot be used
        raise JobError(f"{EPISODE_KIND}: {err}") from None


def _prepare(project: Project, batch_id: str, cell: int, run: int) -> RemoteTask | JobOutcome:
    batch = project.batches.get(batch_id)
    planned = project.batches.cell(batch.id, cell, run)
    if planned.episode_id is not None:  # an earlier attempt stored it: nothing more to do
        stored = planned.episode_id
        return JobOutcome(write=lambda _p: f"sim_episodes:{stored}")
    # checked whole when queued; re-checking would rebuild every scenario's world per job
    manifest = parse_manifest(batch.manifest, source=f"batch {batch.id[:8]} manifest",
                              check_scenarios=False)  # fmt: skip
    agent = manifest.agent(planned.assistant)
    if agent is not None:
        who = [agent]
        makers: list[Any] = [AGENT_KINDS[agent.kind]]
    else:
        assistant = manifest.assistant(planned.assistant)
        who = [manifest.user, assistant]
        makers = [USERS[manifest.user.kind], ASSISTANTS[assistant.kind]]
    bound = open_scenario(planned.scenario)
    files: dict[str, tuple[str, Path]] = {}
    if bound.source not in shipped():  # a file of this machine's: sent by its hash
        path = Path(bound.source)
        files["scenario"] = (hashlib.sha256(path.read_bytes()).hexdigest(), path)
    arm: dict[str, Any] | None = None
    if manifest.mode == "physics" or agent is not None:  # what such an episode records
        arm, arm_files = _arm_inputs(project, run_arm(manifest.arm, bound, project))
        files |= arm_files
    profiles = _model_profiles(project, who)
    inputs = {
        "batch": batch.id,
        "manifest": batch.manifest,
        "cell": {"cell": cell, "run": run, "scenario": planned.scenario,
                 "persona": planned.persona, "assistant": planned.assistant,
                 "timing": planned.timing, "seed": planned.seed},
        "source": bound.source,
        "arm": arm,
        "profiles": profiles,
        # where the participants are registered (``judge`` for ``llm``): a cluster's worker
        # process has imported only this module when the task starts
        "modules": sorted({str(m.__module__) for m in makers}),
    }  # fmt: skip

    def finish(result: DeferredEpisode) -> JobOutcome:
        return _outcome(batch.id, cell, run, result.commit)

    return RemoteTask(fn=run_episode_task, inputs=inputs, finish=finish, files=files,
                      env=_key_names(profiles))  # fmt: skip


def _model_profiles(project: Project, participants: list[Participant]) -> dict[str, dict[str, Any]]:
    """The stored config of every model profile the participants' options name (no secret is
    ever stored in one: a profile names the variable its key is read from)."""
    names = {str(a.options["profile"]) for a in participants if "profile" in a.options}
    return {name: project.profiles.get(name) for name in sorted(names)}


def _key_names(profiles: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    # "OPENAI_API_KEY": the profile's default, for a config stored without the field; ""
    # means the endpoint needs no key
    names = {str(c.get("api_key_env", "OPENAI_API_KEY")) for c in profiles.values()}
    return tuple(sorted(n for n in names if n))


def _arm_inputs(
    project: Project, arm: ResolvedArm
) -> tuple[dict[str, Any], dict[str, tuple[str, Path]]]:
    """A shipped arm by name (every node has its files); a profile's files by their hashes,
    with what rebuilds its :class:`ResolvedArm` where the task runs."""
    if arm.label in ARMS:
        return {"shipped": arm.label}, {}
    profile = project.arms.get(arm.label)  # resolved, so its files were just verified
    folder = project.root / profile.folder
    files = {f"arm/{rel}": (sha, folder / rel) for rel, sha in sorted(profile.files.items())}
    spec = arm.spec
    data = {"label": arm.label, "digest": arm.digest, "mjcf": profile.mjcf,
            "ee_site": spec.ee_site, "arm_joints": list(spec.arm_joints),
            "gripper_actuators": list(spec.gripper_actuators),
            "files": sorted(profile.files)}  # fmt: skip
    return data, files


def _outcome(batch_id: str, cell: int, run: int, commit: Callable[[Project], str]) -> JobOutcome:
    def write(p: Project) -> str:
        episode_id = commit(p)
        p.batches.store_episode(batch_id, cell, run, episode_id)
        for hook in AFTER_STORE:
            hook(p, episode_id)
        return f"sim_episodes:{episode_id}"

    return JobOutcome(write=write)


# ---- where the episode runs: no project, no SQLite -------------------------------------------


def run_episode_task(
    inputs: Mapping[str, Any], files: Mapping[str, Path], channel: Channel
) -> DeferredEpisode:
    """Run one planned episode from what :func:`prepare_episode` read (here or on a cluster
    node); returns it as data, committed later by the project's holder."""
    try:
        return _run_task(inputs, files, channel)
    except Exception as err:
        if isinstance(err, UserError) or hasattr(err, "retryable"):
            raise episode_job_error(err) from None
        raise  # a bug: the worker explains it and never retries


def episode_job_error(err: Exception) -> JobError:
    """A participant's, agent's or arm's failure as the job's. A model endpoint that may answer
    later — refused connection, timeout, 5xx, rate limit (``retryable`` on the error, as
    :class:`sim.interact.ParticipantError` and the model client's errors carry it) — is tried
    again with the queue's backoff (the longer one for a rate limit), the episode from its
    start; anything else (a 4xx, a bad option, the spend cap) fails at once, saying so.

    Read generically (``sim`` never imports the model client): ``retryable`` and ``kind``.
    """
    message = f"{EPISODE_KIND}: {err}"
    if getattr(err, "retryable", False):
        limited = getattr(err, "kind", "") == "rate_limit"
        return JobError(message, retry=True, rate_limited=limited)
    if getattr(err, "kind", ""):  # a model's answer that will not change by asking again
        message += " (not retried: the same request would fail the same way)"
    return JobError(message)


def _run_task(
    inputs: Mapping[str, Any], files: Mapping[str, Path], channel: Channel
) -> DeferredEpisode:
    for module in inputs["modules"]:
        importlib.import_module(module)
    manifest = parse_manifest(inputs["manifest"], source=f"batch {inputs['batch'][:8]} manifest",
                              check_scenarios=False)  # fmt: skip
    c = inputs["cell"]
    text = files["scenario"].read_text(encoding="utf-8") if "scenario" in files else None
    bound = open_scenario(inputs["source"], text=text)
    arm = _resolved_arm(inputs["arm"], files)
    profiles: Mapping[str, Mapping[str, Any]] = inputs["profiles"]
    progress = _JobSink(channel)
    agent = manifest.agent(c["assistant"])
    if agent is not None:  # an agent acting on the world itself (no user)
        from sim.episode import run_episode

        factory = AGENT_KINDS[agent.kind](profiles, agent.options)
        done = run_episode(
            bound, mode=manifest.mode, agent=agent.kind, agent_factory=factory,
            seed=c["seed"], defer=True, extra_sinks=[progress], arm=arm,
        )  # fmt: skip
        if channel.cancelled():
            raise JobError(f"{EPISODE_KIND}: cancelled")
        return done.deferred()
    assistant = manifest.assistant(c["assistant"])
    ep = build_interactive(
        bound,
        mode=manifest.mode,
        persona=manifest.persona(c["persona"]),
        user=manifest.user.kind,
        assistant=assistant.kind,
        user_options=manifest.user.options,
        assistant_options=assistant.options,
        timing="measured" if c["timing"] == "measured" else "fixed",
        seed=c["seed"],
        defer=True,
        arm=arm,
        profiles=profiles,
    )
    runner, sink = ep.runner, ep.sink
    assert sink is not None
    runner.sinks.insert(0, progress)
    try:
        runner.run()
    finally:
        runner.world.close()
    if channel.cancelled():
        raise JobError(f"{EPISODE_KIND}: cancelled")
    return sink.deferred()


def _resolved_arm(data: Mapping[str, Any] | None, files: Mapping[str, Path]) -> ResolvedArm | None:
    if data is None:
        return None
    if "shipped" in data:
        return resolve_arm(str(data["shipped"]))
    from sim.mujoco import ArmSpec

    root = _arm_folder(str(data["digest"]), {rel: files[f"arm/{rel}"] for rel in data["files"]})
    spec = ArmSpec(mjcf=root / str(data["mjcf"]), ee_site=str(data["ee_site"]),
                   arm_joints=tuple(data["arm_joints"]),
                   gripper_actuators=tuple(data["gripper_actuators"]))  # fmt: skip
    return ResolvedArm(spec, str(data["label"]), str(data["digest"]))


def _arm_folder(digest: str, paths: Mapping[str, Path]) -> Path:
    """A folder holding the arm's files in their layout (MuJoCo finds meshes by relative path):
    the project's own when the files are read there, else one built once per node from the
    files received by hash, named by the arm's digest (which covers every path and hash)."""
    rel0, path0 = next(iter(paths.items()))
    depth = len(PurePosixPath(rel0).parts)
    if depth <= len(path0.parents):
        root = path0.parents[depth - 1]
        if all(root / rel == p for rel, p in paths.items()):
            return root
    folder = Path(tempfile.gettempdir()) / ARM_CACHE / digest
    if folder.is_dir():
        return folder
    part = folder.with_name(f".{digest}.{os.getpid()}.part")
    shutil.rmtree(part, ignore_errors=True)
    for rel, p in paths.items():
        (part / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, part / rel)
    try:
        part.replace(folder)  # whole or not at all: a reader never sees half an arm
    except OSError:  # another task on this node built it first
        shutil.rmtree(part, ignore_errors=True)
    return folder


class _JobSink(BaseSink):
    """Progress every :data:`PROGRESS_EVERY` ticks; a cancelled job cancels its episode."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def record(self, runner: EpisodeRunner, *_trace: Any) -> None:
        if runner.tick % PROGRESS_EVERY == 0:
            if self.channel.cancelled():
                runner.cancel()
            budget = max(1, runner.budgets.max_ticks)
            self.channel.progress(min(runner.tick / budget, 0.99), f"tick {runner.tick}")
