"""``workbench sim …``: run, replay, fork and inspect episodes; check an arm description."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from app.cli._options import CREATED_HELP, project_option
from app.cli._run_guard import interruptible


@click.group()
def sim() -> None:
    """Simulated tabletop episodes (MuJoCo physics or the symbolic fast mode)."""


@sim.command("list")
def list_scenarios() -> None:
    """The shipped scenarios."""
    from rich.console import Console
    from rich.table import Table

    from sim.scenario import load_scenario, shipped

    table = Table("name", "family", "title", "Δ s", box=None)
    for name, path in shipped().items():
        s = load_scenario(path)
        table.add_row(name, s.family, s.title, f"{s.delta:g}")
    Console().print(table)


@sim.command()
@click.argument("scenario")
@project_option(CREATED_HELP)
@click.option(
    "--agent", default="scripted", show_default=True,
    type=click.Choice(["scripted", "llm", "external"]),
    help="scripted: the scenario's reference plan; llm: the tool-calling agent on --profile; "
    "external: your own process speaking workbench-agent/1 (--agent-cmd).",
)  # fmt: skip
@click.option("--profile", help="Model profile for --agent llm.")
@click.option(
    "--agent-cmd", "agent_command",
    help="The external agent's command line, e.g. 'python my_policy.py' (--agent external).",
)  # fmt: skip
@click.option(
    "--mode", default="physics", show_default=True, type=click.Choice(["physics", "symbolic"])
)
@click.option("--video", "videos", multiple=True,
              type=click.Choice(["head", "wrist", "top", "front"]),
              help="Record this camera; repeatable.")  # fmt: skip
@click.option("--seed", type=int, default=None, help="Layout seed (default: the scenario's).")
@click.option(
    "--arm", metavar="NAME",
    help="The arm: wb6 (ours, 6 joints), lab7 (7 joints, written differently) or an arm "
    "profile of the project (NAME or NAME@VERSION, see `workbench arm`). Default: the "
    "scenario's arm, else wb6.",
)  # fmt: skip
@click.option("--no-anomalies", is_flag=True, help="Skip the scenario's anomaly schedule.")
@click.option("--reference", is_flag=True, help="Store as the scenario's reference episode.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def run(
    scenario: str,
    project_dir: Path,
    agent: str,
    profile: str | None,
    agent_command: str | None,
    mode: str,
    videos: tuple[str, ...],
    seed: int | None,
    arm: str | None,
    no_anomalies: bool,
    reference: bool,
    as_json: bool,
) -> None:
    """Run SCENARIO (a shipped name or a scenario file) and record the episode."""
    from sim.episode import open_scenario, run_episode
    from storage import Project

    if videos and mode == "symbolic":
        raise click.UsageError("the symbolic mode renders nothing; use --mode physics for video")
    if videos:  # before MuJoCo is loaded (so the platform can still be chosen) and any writing
        from sim.gl import require_rendering

        require_rendering()
    if agent == "llm" and not profile:
        raise click.UsageError("--agent llm needs --profile NAME (see `workbench judge profile`)")
    if agent == "external" and not agent_command:
        raise click.UsageError("--agent external needs --agent-cmd 'your agent command line'")
    bound = open_scenario(scenario)
    with Project.open_or_create(project_dir) as project:
        factory = None
        if agent == "llm":
            from judge import tool_agent_factory

            assert profile is not None
            factory = tool_agent_factory(project, profile)
        elif agent == "external":
            import shlex

            from sim.external import external_factory

            assert agent_command is not None
            factory = external_factory(shlex.split(agent_command))
        with interruptible():
            ep = run_episode(
                bound, mode=mode, agent=agent, agent_factory=factory, seed=seed,
                project=project, videos=videos, anomalies=not no_anomalies,
                reference=reference, arm=arm,
            )  # fmt: skip
    result = ep.runner.result
    assert result is not None
    if as_json:
        import json

        click.echo(json.dumps({
            "episode": ep.episode_id, "status": result.status, "ticks": result.ticks,
            "end_reason": result.end_reason, "success": result.success, "metrics": result.metrics,
            "conditions": [
                {"text": c.predicate_text, "value": c.value.value} for c in result.conditions
            ],
            "videos": ep.video_shas,
        }, indent=2))  # fmt: skip
        return
    _print_result(ep.episode_id, bound.name, mode, result, ep.runner)


@sim.command()
@click.argument("episode")
@project_option()
def replay(episode: str, project_dir: Path) -> None:
    """Re-run EPISODE from its seed and recorded decisions; report the first divergent tick."""
    from sim.episode import replay_episode
    from storage import Project

    with Project.open(project_dir) as project:
        report = replay_episode(project, episode)
    if report.identical:
        click.secho(
            f"identical: {report.compared} state hashes of episode {report.episode_id[:8]} "
            "reproduced", fg="green",
        )  # fmt: skip
        return
    click.secho(
        f"diverged at tick {report.first_divergent}: expected {report.expected}, "
        f"got {report.got}", fg="red",
    )  # fmt: skip
    sys.exit(1)


@sim.command()
@click.argument("episode")
@click.argument("tick", type=click.IntRange(min=0))
@project_option()
def fork(episode: str, tick: int, project_dir: Path) -> None:
    """Continue EPISODE from TICK as a new episode (with its recorded decisions)."""
    from sim.episode import fork_episode
    from storage import Project

    with Project.open(project_dir) as project:
        ep = fork_episode(project, episode, tick)
    result = ep.runner.result
    assert result is not None
    _print_result(ep.episode_id, ep.runner.scenario.name, "fork", result, ep.runner)


@sim.command()
@project_option()
def episodes(project_dir: Path) -> None:
    """List the project's episodes, newest first."""
    from rich.console import Console
    from rich.table import Table

    from storage import Project

    with Project.open(project_dir) as project:
        rows = project.episodes.list()
        # the arm each ran with (a physics episode from before episodes said: wb6), in full
        arms = [
            str(ep.config.get("arm") or ("wb6" if ep.mode.value == "physics" else "—"))
            for ep in rows
        ]
        table = Table("id", "scenario", "mode", box=None)
        table.add_column("arm", min_width=max(map(len, arms), default=3))
        for column in ("agent", "status", "ticks", "success"):
            table.add_column(column)
        for ep, arm in zip(rows, arms, strict=True):
            success = project.episodes.metrics(ep.id).get("success")
            table.add_row(
                ep.id[:8], ep.scenario, ep.mode.value, arm, ep.agent, ep.status.value,
                str(ep.ticks), "—" if success is None else ("yes" if success else "no"),
            )  # fmt: skip
    Console().print(table)


@sim.command()
@click.argument("mjcf", type=click.Path(path_type=Path))
@click.option("--ee-site", required=True, help="End-effector site name.")
@click.option("--arm-joints", required=True, help="Comma-separated arm joint names, base first.")
@click.option("--gripper", required=True, help="Comma-separated gripper actuator names.")
@click.option("--trials", default=3, show_default=True, type=click.IntRange(min=0))
@click.option(
    "--scenarios", "scenario_refs", multiple=True, metavar="all|NAME,...",
    help="Also say, per scenario (all shipped ones, or names or files; repeatable), whether "
    "the arm reaches every pose and grasps every object its reference needs.",
)  # fmt: skip
@click.option(
    "--run", "run_reference", is_flag=True,
    help="With --scenarios: run each reference too, symbolic then physics, and report the "
    "contract outcome.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def check(
    mjcf: Path,
    ee_site: str,
    arm_joints: str,
    gripper: str,
    trials: int,
    scenario_refs: tuple[str, ...],
    run_reference: bool,
    as_json: bool,
) -> None:
    """Check that an arm MJCF can be driven: names, limits, actuators, home, gripper, reach,
    pick-and-place, and with --scenarios what it can do of each scenario."""
    from rich.console import Console

    from app.cli._sim_check import home_line, print_table, report_json
    from sim.episode import capability_table, open_scenarios
    from sim.mujoco import ArmSpec, check_arm

    if run_reference and not scenario_refs:
        raise click.UsageError("--run runs the scenarios' references: give --scenarios too")
    spec = ArmSpec(
        mjcf=mjcf,
        ee_site=ee_site,
        arm_joints=tuple(j.strip() for j in arm_joints.split(",") if j.strip()),
        gripper_actuators=tuple(g.strip() for g in gripper.split(",") if g.strip()),
    )
    # a scenario name that does not exist is the user's (ScenarioError): before the slow part
    bound = open_scenarios(scenario_refs) if scenario_refs else []
    report = check_arm(spec, trials=trials)  # an ArmSpecError is the user's: one line, exit 2
    table = capability_table(spec, bound, run=run_reference) if bound else None
    if as_json:
        import json

        click.echo(json.dumps(report_json(report, table), indent=2))
        if not report.ok:
            sys.exit(1)
        return
    joints = ", ".join(spec.arm_joints)
    click.echo(f"arm: {report.arm} · {len(spec.arm_joints)} joints ({joints}) · site {ee_site}")
    click.echo(home_line(report))
    r = report.reach
    click.echo(f"reach: {r['reached']}/{r['samples']} check-table poses ({r['fraction']:.0%})")
    click.echo(f"pick-and-place: {report.succeeded}/{report.trials} trials succeeded")
    for line in report.messages:
        click.echo(line)
    if report.ok:
        click.secho(f"ok: {mjcf} can be used as the arm", fg="green")
    else:
        click.secho(f"not usable: {mjcf}", fg="red")
    if table is not None:
        print_table(Console(), table, ran=run_reference)
    if not report.ok:
        sys.exit(1)


def _print_result(
    episode_id: str | None, name: str, mode: str, result: object, runner: object
) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from sim.episode import EpisodeResult, EpisodeRunner

    assert isinstance(result, EpisodeResult) and isinstance(runner, EpisodeRunner)
    console = Console()
    verdict = "[green]success[/]" if result.success else "[red]goal not met[/]"
    ident = f" · episode {episode_id[:8]}" if episode_id else ""
    console.print(
        f"[bold]{name}[/] ({mode}){ident}: {result.status}, {result.ticks} ticks, {verdict}"
    )
    if result.end_reason:
        console.print(f"[yellow]{result.status}:[/] {escape(result.end_reason)}")
    m = result.metrics
    validity = f"{m['validity']:.2f}" if "validity" in m else "—"
    console.print(
        f"GCR {m['gcr']:.2f} · validity {validity} · attempts {int(m['attempts'])} "
        f"({int(m['rejected'])} rejected, {int(m['execution_failures'])} failed in execution)"
        f" · anomalies {int(m['anomalies'])}"
    )
    table = Table("condition", "value", "since tick", box=None)
    style = {"T": "green", "F": "red", "U": "yellow"}
    for c in result.conditions:
        v = c.value.value
        table.add_row(
            c.predicate_text,
            f"[{style[v]}]{v}[/]",
            "" if c.witness_tick is None else str(c.witness_tick),
        )
    console.print(table)
    for a in runner.actions:
        if a.verdict is not None and not a.verdict.accepted:
            console.print(
                f"  [yellow]rejected[/] t={a.tick} {a.action.describe()}: {a.verdict.reason}"
            )
        elif a.outcome and a.outcome != "ok":
            console.print(f"  [red]{a.outcome}[/] t={a.tick} {a.action.describe()}")


COMMANDS = [sim]
