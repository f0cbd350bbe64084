"""Judge commands: ``workbench judge run|status|rescore|profile``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from app.cli._options import project_option
from app.cli._quality_cmd import quality


@click.group()
def judge() -> None:
    """Queue VLM judge jobs, follow them, and re-score recorded answers."""


@judge.command("run")
@project_option()
@click.option("--videos", "videos", multiple=True, help="Video id (repeatable). Default: all.")
@click.option("--case", "case_id", help="All videos of this case.")
@click.option("--profile", required=True, help="Model profile name (see `judge profile list`).")
@click.option(
    "--mode", type=click.Choice(["gated", "independent", "simple_vqa"]), default="gated",
    show_default=True,
)  # fmt: skip
@click.option("--batch", help="Batch name (default: judge-<mode>-<time>).")
@click.option(
    # Literals, not storage's DEFAULT_* (importing storage would slow every `--help`); a test
    # keeps them equal to the queue's defaults.
    "--max-attempts", type=click.IntRange(min=1), default=3, show_default=True,
    help="Attempts per video, counting one whose worker died.",
)  # fmt: skip
@click.option(
    "--retry-backoff", "retry_backoff_s", type=click.FloatRange(min=0),
    default=20.0,
    show_default=True, help="Seconds before a retryable failure (timeout, 5xx) runs again.",
)  # fmt: skip
@click.option(
    "--rate-limit-backoff", "rate_limit_backoff_s", type=click.FloatRange(min=0),
    default=60.0,
    show_default=True, help="Seconds to wait after the endpoint answered 429 (rate limited).",
)  # fmt: skip
@click.option(
    # literal bound, not judge's MAX_CONTINUITY_WINDOWS, for the same reason as above
    "--continuity", "continuity", type=click.IntRange(0, 16), default=0, show_default=True,
    help="Offer the VLM the N strongest continuity-scan windows at the Physics gates as places "
    "to inspect (0: off). Recorded with each run; videos not scanned yet are scanned first.",
)  # fmt: skip
def run(
    project_dir: Path,
    videos: tuple[str, ...],
    case_id: str | None,
    profile: str,
    mode: str,
    batch: str | None,
    max_attempts: int,
    retry_backoff_s: float,
    rate_limit_backoff_s: float,
    continuity: int,
) -> None:
    """Queue one judge job per video. Start `workbench worker` to run them."""
    from judge import queue_judge
    from storage import Project

    with Project.open(project_dir) as project:
        chosen = list(videos) or [v.id for v in project.videos(case_id)]
        name, ids = queue_judge(
            project, chosen, profile=profile, mode=mode, batch=batch, max_attempts=max_attempts,
            retry_backoff_s=retry_backoff_s, rate_limit_backoff_s=rate_limit_backoff_s,
            config={"continuity_windows": continuity} if continuity else None,
        )  # fmt: skip
    offer = f", offering {continuity} continuity window(s)" if continuity else ""
    click.echo(f"queued {len(ids)} job(s) in batch {name}{offer}")
    click.echo(f"run them with: workbench worker --project {project_dir} --drain", err=True)


@judge.command("status")
@project_option()
@click.option("--batch", help="Only this batch.")
@click.option("--json", "as_json", is_flag=True)
def status(project_dir: Path, batch: str | None, as_json: bool) -> None:
    """Job counts, money spent, and failures with their reasons.

    Spend is what every recorded model call cost, over every attempt of every job (a call
    made by a worker that died is paid for too), not what the jobs last reported."""
    from judge import JUDGE_KIND
    from storage import JobStatus, Project

    with Project.open(project_dir, readonly=True) as project:
        jobs = [j for j in project.jobs.query(batch=batch) if j.kind == JUDGE_KIND]
        cost = round(project.jobs.spend(batch=batch), 6)
    counts = {s.value: sum(1 for j in jobs if j.status is s) for s in JobStatus}
    calls = sum(j.calls for j in jobs)
    failed = [
        {"job": j.id, "video_id": j.payload.get("video_id"), "error": j.error}
        for j in jobs
        if j.status is JobStatus.FAILED
    ]
    if as_json:
        click.echo(
            json.dumps({"counts": counts, "cost_usd": cost, "calls": calls, "failed": failed})
        )
        return
    summary = "  ".join(f"{k} {v}" for k, v in counts.items())
    click.echo(f"{summary}  spent ${cost:.4f} on {calls} call(s)")
    for f in failed:
        click.echo(f"  job {f['job']} ({f['video_id']}): {f['error']}")


COMMANDS: list[click.Command] = [judge]
judge.add_command(quality)


def _num(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}"


@judge.command("rescore")
@project_option()
@click.option("--run", "run_ids", type=int, multiple=True, help="Run id (repeatable).")
@click.option("--batch", help="Runs made by the jobs of this batch.")
@click.option("--json", "as_json", is_flag=True)
def rescore(project_dir: Path, run_ids: tuple[int, ...], batch: str | None, as_json: bool) -> None:
    """Recompute T, P and S of finished runs from their recorded answers (no model calls)."""
    from judge import rule_scores
    from storage import JudgeRuns, Project

    out = []
    with Project.open(project_dir) as project:
        runs = JudgeRuns(project.db)
        ids = list(run_ids)
        if not ids:
            job_ids = {j.id for j in project.jobs.query(batch=batch)} if batch else None
            ids = [
                r.id
                for v in project.videos()
                for r in runs.runs(v.id)
                if r.status == "done" and (job_ids is None or r.job_id in job_ids)
            ]
        for run_id in sorted(ids):
            before = runs.get(run_id).s
            scores = runs.rescore(run_id, rule_scores)
            out.append(
                {"run": run_id, "S_before": before}
                | {rule: sc.score.as_dict() for rule, sc in scores.items()}
            )
    if as_json:
        click.echo(json.dumps(out))
        return
    for row in out:
        rules = "  ".join(f"{k}: S {_num(v['S'])}" for k, v in row.items() if isinstance(v, dict))
        click.echo(f"run {row['run']}: {rules}")
    click.echo(f"re-scored {len(out)} run(s) from recorded answers", err=True)


@judge.group("profile")
def profile() -> None:
    """Model profiles: endpoint, model, limits and prices. Never an API key."""


@profile.command("add")
@project_option()
@click.argument("name")
@click.option("--base-url", required=True, help="OpenAI-compatible API root, e.g. http://host/v1")
@click.option("--model", required=True)
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="Environment variable holding the key ('' if none is needed).")  # fmt: skip
@click.option("--timeout", "timeout_s", type=float, default=180.0, show_default=True)
@click.option("--max-output-tokens", type=int, default=4096, show_default=True)
@click.option("--price-in", type=float, default=0.0, help="US$ per million input tokens.")
@click.option("--price-out", type=float, default=0.0, help="US$ per million output tokens.")
@click.option("--spend-cap", type=float, default=2.0, show_default=True, help="US$ per video.")
@click.option(
    "--tokens-per-image", type=click.IntRange(min=1), default=800, show_default=True,
    help="Input tokens assumed per image when checking that a call's worst case fits the cap.",
)  # fmt: skip
@click.option("--reasoning-effort", default=None)
def profile_add(
    project_dir: Path,
    name: str,
    base_url: str,
    model: str,
    api_key_env: str,
    timeout_s: float,
    max_output_tokens: int,
    price_in: float,
    price_out: float,
    spend_cap: float,
    tokens_per_image: int,
    reasoning_effort: str | None,
) -> None:
    """Add or replace a profile in the project."""
    from pydantic import ValidationError

    from judge import ModelProfile, save_profile
    from storage import Project

    try:
        prof = ModelProfile(
            name=name, base_url=base_url, model=model, api_key_env=api_key_env,
            timeout_s=timeout_s, max_output_tokens=max_output_tokens,
            price_in_per_mtok=price_in, price_out_per_mtok=price_out,
            spend_cap_usd=spend_cap, tokens_per_image=tokens_per_image,
            reasoning_effort=reasoning_effort,
        )  # fmt: skip
    except ValidationError as e:
        first = e.errors()[0]
        raise click.BadParameter(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    with Project.open(project_dir) as project:
        save_profile(project.profiles, prof)
    click.echo(f"saved profile {name}: {model} at {base_url}")


@profile.command("list")
@project_option()
def profile_list(project_dir: Path) -> None:
    """Profiles stored in the project."""
    from judge import load_profile
    from storage import Project

    with Project.open(project_dir) as project:
        for name in project.profiles.list():
            p = load_profile(project.profiles, name)
            caps = p.capabilities.summary() if p.capabilities else "not probed"
            click.echo(
                f"{name}: {p.model} at {p.base_url} · key from ${p.api_key_env or '(none)'} · "
                f"cap ${p.spend_cap_usd:.2f}/video · {caps}"
            )


@profile.command("probe")
@project_option()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="The capabilities as JSON.")
def profile_probe(project_dir: Path, name: str, as_json: bool) -> None:
    """Measure what the profile's server honours (one short call per feature) and keep it
    with the profile: the client then sends what the server applies."""
    from judge import probe_and_save, video_judge_refusal
    from storage import Project

    with Project.open(project_dir) as project:
        probed = probe_and_save(project, name)
    caps = probed.capabilities
    assert caps is not None
    if as_json:
        click.echo(caps.model_dump_json(indent=2))
        return
    click.echo(f"{name}: {caps.summary()}")
    for note in caps.notes:
        click.echo(f"  - {note}")
    refusal = video_judge_refusal(probed)
    if refusal:
        click.echo(f"  {refusal}")


@profile.command("remove")
@project_option()
@click.argument("name")
def profile_remove(project_dir: Path, name: str) -> None:
    """Delete a profile (runs made with it keep their recorded configuration)."""
    from storage import Project

    with Project.open(project_dir) as project:
        if not project.profiles.delete(name):
            raise click.BadParameter(f"no profile {name!r}", param_hint="NAME")
    click.echo(f"removed profile {name}")
