"""``workbench episode run``: one interactive episode (simulated user + assistant under test);
``episode import``: a bundle from another harness; ``episode note``: a person's note on one;
``episode export``: one episode as a Rerun recording (.rrd)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from app.cli._batch_cmds import rater_option, rater_or_default
from app.cli._calls import calls_line
from app.cli._options import CREATED_HELP, project_option
from app.cli._run_guard import interruptible


def _options(pairs: tuple[str, ...], flag: str) -> dict[str, Any]:
    """``key=value`` pairs; a value that reads as JSON (numbers, true) is taken as such."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint=flag)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


@click.group()
def episode() -> None:
    """Interactive episodes: a simulated user works while an assistant under test talks."""


@episode.command("run")
@click.argument("scenario")
@project_option(CREATED_HELP)
@click.option(
    "--persona", default="balanced", show_default=True,
    help="A named persona (novice, expert, balanced, fast-sceptic) or a JSON file.",
)  # fmt: skip
@click.option("--user", default="rule", show_default=True, help="Simulated user kind.")
@click.option("--assistant", default="oracle", show_default=True, help="Assistant kind.")
@click.option("--profile", help="Model profile for an llm user or assistant.")
@click.option("--user-option", "user_opts", multiple=True, metavar="KEY=VALUE")
@click.option("--assistant-option", "assistant_opts", multiple=True, metavar="KEY=VALUE")
@click.option("--timing", default="fixed", show_default=True,
              type=click.Choice(["fixed", "measured"]))  # fmt: skip
@click.option("--mode", default="symbolic", show_default=True,
              type=click.Choice(["symbolic", "physics"]))  # fmt: skip
@click.option("--schedule", type=click.Path(path_type=Path),
              help="An event schedule file (default: the scenario's shipped one).")  # fmt: skip
@click.option("--seed", type=int, default=None, help="Layout seed (default: the scenario's).")
@click.option("--arm", metavar="NAME", help="The arm in physics: wb6, lab7 or an arm profile "
              "of the project (default: the scenario's arm, else wb6).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def run(
    scenario: str, project_dir: Path, persona: str, user: str, assistant: str,
    profile: str | None, user_opts: tuple[str, ...], assistant_opts: tuple[str, ...],
    timing: str, mode: str, schedule: Path | None, seed: int | None, arm: str | None,
    as_json: bool,
) -> None:  # fmt: skip
    """Run SCENARIO with a simulated user and an assistant, and record the episode."""
    import judge  # noqa: F401  (registers the model-backed participants)
    from sim.episode import open_scenario
    from sim.interact import known_ids, load_schedule, run_interactive
    from sim.users import PROFILES, parse_persona
    from storage import Project

    u_options, a_options = (
        _options(user_opts, "--user-option"),
        _options(assistant_opts, "--assistant-option"),
    )
    if profile is not None:
        for kind, opts in ((user, u_options), (assistant, a_options)):
            if kind == "llm":
                opts.setdefault("profile", profile)
    if persona in PROFILES:
        who = PROFILES[persona]
    else:
        path = Path(persona)
        if not path.is_file():
            raise click.BadParameter(
                f"{persona!r} is neither a named persona ({', '.join(PROFILES)}) nor a file",
                param_hint="--persona",
            )
        who = parse_persona(json.loads(path.read_text(encoding="utf-8")), where=str(path))
    bound = open_scenario(scenario)
    with Project.open_or_create(project_dir) as project:
        sched = None
        if schedule is not None:
            from sim.episode import make_world

            world = make_world(bound, "symbolic")
            try:
                ids = known_ids(world, bound.scenario.seed if seed is None else seed)
            finally:
                world.close()
            sched = load_schedule(schedule, bound, ids)
        with interruptible():
            ep = run_interactive(
                bound=bound, mode=mode, persona=who, user=user, assistant=assistant,
                user_options=u_options, assistant_options=a_options,
                timing="measured" if timing == "measured" else "fixed",
                schedule=sched, seed=seed, project=project, arm=arm,
            )  # fmt: skip
        assert ep.episode_id is not None
        stored = project.episodes.get(ep.episode_id)
        values = project.episodes.metrics(stored.id)
        events = project.episodes.events(stored.id)
        turns = project.episodes.turns(stored.id)
        calls = project.episodes.call_totals(stored.id)
    if as_json:
        click.echo(json.dumps({
            "episode": stored.id, "status": stored.status.value, "ticks": stored.ticks,
            "end_reason": stored.end_reason, "metrics": values, "turns": len(turns),
            "calls": calls.to_json(),
            "events": [{"id": e.event_id, "category": e.category, "type": e.type,
                        "trigger_tick": e.trigger_tick, "resolution": e.resolution}
                       for e in events],
        }, indent=2))  # fmt: skip
        return
    ok = "succeeded" if values.get("success") == 1.0 else "failed"
    click.echo(
        f"episode {stored.id[:8]}: {bound.name}, {who.name}, {user}+{assistant}: {ok} "
        f"({stored.status.value}, {stored.ticks} ticks, {len(turns)} turns)"
    )
    if stored.end_reason:
        click.echo(f"  {stored.status.value}: {stored.end_reason}")
    if calls.replies:
        click.echo(f"  model calls: {calls_line(calls)}")
    for e in events:
        when = "not reached" if e.trigger_tick is None else f"t{e.trigger_tick} → {e.resolution}"
        click.echo(f"  event {e.event_id} ({e.category}{' ' + e.type if e.type else ''}): {when}")
    click.echo(f"metrics: workbench metrics {stored.id[:8]} --project {project_dir}")


@episode.command("import")
@click.argument("bundle", type=click.Path(path_type=Path))
@project_option()
def import_(bundle: Path, project_dir: Path) -> None:
    """Import an episode bundle another harness wrote (docs/episode-bundle.md); the same
    bundle again changes nothing."""
    from sim.review import import_episode_bundle
    from storage import Project

    with Project.open(project_dir) as project:
        done = import_episode_bundle(project, bundle)
    click.echo(f"{done.summary(bundle)}; open it in the Episode workspace")


@episode.command("note")
@click.argument("episode_id", metavar="EPISODE")
@click.argument("text")
@project_option()
@rater_option
def note(episode_id: str, text: str, project_dir: Path, rater: str | None) -> None:
    """Set EPISODE's note to TEXT ('' clears it); the episode browser shows it."""
    from storage import Project

    scope = rater_or_default(rater)
    with Project.open(project_dir) as project:
        eid = project.episodes.get(episode_id).id
        project.notes.set_note(eid, text, scope=scope)
    done = "note saved" if text.strip() else "note cleared"
    click.echo(f"episode {eid[:8]}: {done} (undo it in the workbench as {scope})")


@episode.command("export")
@click.argument("episode_id", metavar="EPISODE")
@click.option(
    "--rrd", "rrd", type=click.Path(path_type=Path, dir_okay=False),
    help="A Rerun recording to write (.rrd), for Rerun's viewer.",
)  # fmt: skip
@click.option(
    "--bundle", "bundle", type=click.Path(path_type=Path, file_okay=False),
    help="An episode bundle folder to write (workbench-episode-bundle/1, docs/episode-bundle.md).",
)  # fmt: skip
@project_option()
def export(episode_id: str, rrd: Path | None, bundle: Path | None, project_dir: Path) -> None:
    """Export EPISODE (an id or its first characters) to a Rerun recording (--rrd) and/or an
    episode bundle (--bundle), the project's own format that `episode import` reads back.

    --rrd needs the optional rerun-sdk: pip install 'rollout-workbench[rerun]'.
    """
    from sim.review import export_bundle, export_rerun
    from storage import Project

    if rrd is None and bundle is None:
        raise click.UsageError("give --rrd FILE, --bundle FOLDER, or both")
    with Project.open(project_dir) as project:
        if bundle is not None:
            click.echo(f"wrote the bundle {export_bundle(project, episode_id, bundle)}")
        if rrd is not None:
            click.echo(export_rerun(project, episode_id, rrd).summary())


COMMANDS = [episode]
