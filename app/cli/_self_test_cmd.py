"""``workbench self-test``: the install's own headless check, as a readable report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from app.cli._options import project_option


@click.command("self-test")
@click.option(
    "--full", is_flag=True, help="Generate the whole demo, MuJoCo episodes too (~1.5 min)."
)
@project_option(
    "Also check this project: its file, page by page, and its model profiles (where each key "
    "would come from).",
    required=False, exists=True, file_okay=False,
)  # fmt: skip
@click.option(
    "--call",
    is_flag=True,
    help="With --project: call each profile's endpoint once (GET /models). "
    "Without it the self-test makes no network call.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per check, then a summary.")
def self_test(full: bool, project_dir: Path | None, call: bool, as_json: bool) -> None:  # fmt: skip
    """Check, headless, that this install works: video decode, OpenGL and MuJoCo, SQLite, the
    demo project, the model client. Exits 1 if a required check fails."""
    from rich.console import Console

    from app._self_test import CheckResult, Options, passed, run_self_test

    if call and project_dir is None:
        raise click.UsageError("--call needs --project (the profiles to call)")
    if project_dir is not None:  # a damaged project: its one message (exit 2), not a report
        from storage import Project

        with Project.open(project_dir, readonly=True) as project:
            project.check()
    console = Console(stderr=False, highlight=False, soft_wrap=True)

    def show(r: CheckResult) -> None:
        if as_json:
            record = {"check": r.name, "ok": r.ok, "required": r.required,
                      "seconds": round(r.seconds, 3), "detail": r.detail}  # fmt: skip
            click.echo(json.dumps(record))
            return
        mark = "[green]ok  [/]" if r.ok else ("[red]FAIL[/]" if r.required else "[yellow]warn[/]")
        console.print(f"{mark} [bold]{r.name:<15}[/] {r.detail} [dim]({r.seconds:.1f} s)[/]")

    results = run_self_test(Options(full_demo=full, project=project_dir, call=call), show)
    ok = passed(results)
    failed = [r.name for r in results if r.required and not r.ok]
    if as_json:
        click.echo(json.dumps({"passed": ok, "failed": failed}))
    else:
        console.print(
            "[green]self-test passed[/]" if ok else f"[red]self-test FAILED: {', '.join(failed)}[/]"
        )
    sys.exit(0 if ok else 1)


COMMANDS = [self_test]
