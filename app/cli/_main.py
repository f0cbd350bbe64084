"""Entry point: the ``workbench`` click group and the error boundary.

A user mistake (bad file, bad argument) exits with a one-line message naming the file or field;
only a bug shows a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

# each module by its own name: `from app.cli import ...` would import this package back
import app.cli._agreement_cmd as _agreement_cmd
import app.cli._arm_cmds as _arm_cmds
import app.cli._batch_cmds as _batch_cmds
import app.cli._blind_cmds as _blind_cmds
import app.cli._continuity_cmds as _continuity_cmds
import app.cli._corrupt_cmds as _corrupt_cmds
import app.cli._episode_cmds as _episode_cmds
import app.cli._jobs_cmds as _jobs_cmds
import app.cli._judge_cmds as _judge_cmds
import app.cli._media as _media
import app.cli._project_cmds as _project_cmds
import app.cli._score as _score
import app.cli._self_test_cmd as _self_test_cmd
import app.cli._sim_cmds as _sim_cmds
import app.cli._study_cmds as _study_cmds
import app.cli._teleop_cmds as _teleop_cmds
from app.cli._options import project_option


class _Group(click.Group):
    """The CLI's one error boundary.

    A :class:`UserError` is the user's to fix: one line naming what and why, exit 2; so is a full
    disk, however deep it was raised (an ``OSError`` ENOSPC, SQLite's "database or disk is
    full"). Anything else is a bug: one line saying so and where its traceback was written, exit
    1. Click's own exceptions (usage errors, --help, Ctrl+C) pass through to click. Every line
    printed and every log record goes through ``annotation.redact``: an endpoint's error may
    quote the API key it refused.
    """

    def invoke(self, ctx: click.Context) -> Any:
        from app._bug_report import redact_log_records

        redact_log_records()
        args = list(ctx.args)  # the subcommand's: where its --project is, for a full disk
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # the reader went away (`workbench … | head`): what was printed is what they wanted
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except Exception as e:
            # imported here, not at the top: `workbench --help` must not load the core
            from annotation import UserError, disk_full, redact

            if isinstance(e, UserError):
                click.secho(f"error: {redact(str(e))}", fg="red", err=True)
                for note in getattr(e, "__notes__", ()):  # e.g. where a failed run was stored
                    click.echo(f"  {redact(str(note))}", err=True)
                sys.exit(2)
            from app._bug_report import (
                bug_message,
                command_line,
                disk_full_message,
                write_bug_report,
            )

            if disk_full(e):
                click.secho(f"error: {disk_full_message(e, _project(args))}", fg="red", err=True)
                sys.exit(2)

            path = write_bug_report(e, where=command_line())
            click.secho(f"error: {bug_message(e, path)}", fg="red", err=True)
            sys.exit(1)


def _project(args: list[str]) -> Path | None:
    """The ``--project`` folder among a command's arguments, if it names one."""
    for i, arg in enumerate(args):
        if arg == "--project" and i + 1 < len(args):
            return Path(args[i + 1])
        if arg.startswith("--project="):
            return Path(arg.removeprefix("--project="))
    return None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="rollout-workbench")
def cli() -> None:
    """Rollout Workbench: judge and debug embodied AI rollouts, offline."""


@cli.command()
@project_option(required=False)
@click.option(
    "--screenshot",
    type=click.Path(path_type=Path),
    hidden=True,
    help="Save the window as this PNG once it has settled, then quit (smoke tests).",
)
def gui(project_dir: Path | None, screenshot: Path | None) -> None:  # fmt: skip
    """Open the workbench window (optionally on a project)."""
    from app.gui import run_gui, screenshot_and_quit

    then = None if screenshot is None else screenshot_and_quit(screenshot)
    sys.exit(run_gui(project_dir, then=then))


cli.add_command(_score.score)
cli.add_command(_agreement_cmd.agreement)
cli.add_command(_agreement_cmd.ablation)
cli.add_command(_media.video)
for command in (
    *_project_cmds.COMMANDS,
    *_jobs_cmds.COMMANDS,
    *_judge_cmds.COMMANDS,
    *_study_cmds.COMMANDS,
    *_sim_cmds.COMMANDS,
    *_arm_cmds.COMMANDS,
    *_episode_cmds.COMMANDS,
    *_batch_cmds.COMMANDS,
    *_continuity_cmds.COMMANDS,
    *_blind_cmds.COMMANDS,
    *_corrupt_cmds.COMMANDS,
    *_self_test_cmd.COMMANDS,
    *_teleop_cmds.COMMANDS,  # after the project commands: its `export` group replaces theirs
):
    cli.add_command(command)


def main() -> None:
    cli()
