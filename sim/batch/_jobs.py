"""Queue a batch and run its episodes as ``sim.episode`` jobs, each stored exactly once.

:func:`queue_batch` plans the batch, queues one job per planned episode and links them, all in
one transaction: a batch is queued whole or not at all. The job's payload only points at its
planned run (``{"batch_id", "cell", "run"}``); what to run is read from the stored manifest, so
the plan the user saw is the plan that runs.

The job runs the interactive episode with deferred sinks (nothing is written while it runs) and
returns a :class:`JobOutcome` whose ``write`` stores the whole episode, links it to its planned
run, and stores its metrics and proposed failure attribution — inside the worker's transaction
that marks the job done. A worker killed mid-episode therefore leaves nothing behind and the
job runs again from the start; a job that finds its run already stored (a stale re-run) stores
nothing; and :meth:`storage.Batches.store_episode` refuses a second episode for one run, which
rolls the whole transaction back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from sim.episode import BaseSink, EpisodeRunner, open_scenario
from sim.interact import build_interactive, store_episode_metrics
from sim.scenario import BoundScenario
from storage import (
    DEFAULT_MAX_ATTEMPTS,
    BatchCellRecord,
    JobContext,
    JobError,
    JobOutcome,
    Project,
    register,
)

EPISODE_KIND = "sim.episode"
PROGRESS_EVERY = 200  # ticks between progress reports and cancellation checks

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
    project: Project, manifest: Manifest, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS
) -> tuple[str, list[int]]:
    """Plan the batch and queue one job per planned episode; returns the batch id and job ids.

    A participant option naming a model ``profile`` the project lacks is refused first.
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
            AGENT_KINDS[a.kind](project, a.options)
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
        job_ids = project.jobs.enqueue(
            EPISODE_KIND, payloads, batch=batch_id, max_attempts=max_attempts
        )
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


@register(EPISODE_KIND)
def episode_job(ctx: JobContext) -> JobOutcome:
    """Run one planned episode of a batch (see the module docstring)."""
    batch_id, cell, run = _payload(ctx.payload)
    project = Project.open(ctx.project_root)
    try:
        return _run(ctx, project, batch_id, cell, run)
    except UserError as err:  # a manifest, scenario or participant that cannot be used
        raise JobError(f"{EPISODE_KIND}: {err}") from None
    finally:
        project.close()


def _run(ctx: JobContext, project: Project, batch_id: str, cell: int, run: int) -> JobOutcome:
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
        return _run_agent(ctx, project, batch.id, planned, manifest, agent)
    assistant = manifest.assistant(planned.assistant)
    ep = build_interactive(
        open_scenario(planned.scenario),
        mode=manifest.mode,
        persona=manifest.persona(planned.persona),
        user=manifest.user.kind,
        assistant=assistant.kind,
        user_options=manifest.user.options,
        assistant_options=assistant.options,
        timing="measured" if planned.timing == "measured" else "fixed",
        seed=planned.seed,
        project=project,
        defer=True,
        arm=manifest.arm,
    )
    runner, sink = ep.runner, ep.sink
    assert sink is not None
    runner.sinks.insert(0, _JobSink(ctx))
    try:
        runner.run()
    finally:
        runner.world.close()
    if ctx.cancelled():
        raise JobError(f"{EPISODE_KIND}: cancelled")
    return _outcome(batch.id, cell, run, sink.commit)


def _outcome(batch_id: str, cell: int, run: int, commit: Callable[[Project], str]) -> JobOutcome:
    def write(p: Project) -> str:
        episode_id = commit(p)
        p.batches.store_episode(batch_id, cell, run, episode_id)
        for hook in AFTER_STORE:
            hook(p, episode_id)
        return f"sim_episodes:{episode_id}"

    return JobOutcome(write=write)


class _JobSink(BaseSink):
    """Progress every :data:`PROGRESS_EVERY` ticks; a cancelled job cancels its episode."""

    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx

    def record(self, runner: EpisodeRunner, *_trace: Any) -> None:
        if runner.tick % PROGRESS_EVERY == 0:
            if self.ctx.cancelled():
                runner.cancel()
            budget = max(1, runner.budgets.max_ticks)
            self.ctx.progress(min(runner.tick / budget, 0.99), f"tick {runner.tick}")


def _run_agent(
    ctx: JobContext, project: Project, batch_id: str, planned: BatchCellRecord,
    manifest: Manifest, agent: Participant,
) -> JobOutcome:  # fmt: skip
    """An agent acting on the world itself (no user): the engine's episode, deferred."""
    from sim.episode import run_episode

    factory = AGENT_KINDS[agent.kind](project, agent.options)
    ep = run_episode(
        open_scenario(planned.scenario), mode=manifest.mode, agent=agent.kind,
        agent_factory=factory, seed=planned.seed, project=project, defer=True,
        extra_sinks=[_JobSink(ctx)], arm=manifest.arm,
    )  # fmt: skip
    if ctx.cancelled():
        raise JobError(f"{EPISODE_KIND}: cancelled")
    return _outcome(batch_id, planned.cell, planned.run, ep.commit)
