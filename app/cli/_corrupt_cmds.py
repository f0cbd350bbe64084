"""``workbench corrupt`` and ``workbench corrupt-bench``: the paper's controlled corruptions
(Ego2Act §8.2), one clip at a time or as a benchmark of the continuity scan."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import click

from app.cli._options import project_option

KINDS = ("teleport", "swap", "ghost", "none")


@click.command()
@click.argument("video", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--kind", type=click.Choice(KINDS), required=True, help="The edit to make.")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="The MP4 to write; its ground truth goes to OUT.json.")  # fmt: skip
def corrupt(video: Path, kind: str, out: Path) -> None:
    """Write VIDEO with a teleport (1.5 s deleted), a swap (two 1.5 s segments reversed), a
    ghost (the frame 3 s earlier blended at 50 % for 2 s) or none (a re-encode), centred on its
    most active 3 s; prints the edited interval (seconds of the output)."""
    from sim.synthetic import corrupt_video

    record = corrupt_video(video, kind, out)
    frames = f"{record.frames_in} → {record.frames_out} frames"
    click.echo(f"{kind}: {record.start_s:.3f}–{record.end_s:.3f} s of {out} ({frames}); "
               f"truth in {out}.json")  # fmt: skip


def _trials(corruptions: list[Any]) -> list[Any]:
    from storage.media.continuity import Trial, scan_video

    out = []
    for c in corruptions:
        scan = scan_video(Path(c.output))
        out.append(Trial(c.source, c.kind, c.start_s, c.end_s, scan.windows))
    return out


def _table(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"continuity scan on {report['sources']} clips ({report['trials']} trials)")
    for col in ("", "rate", "95 % CI", "n", "localisation (median / p90 s)"):
        table.add_column(col)
    for key in ("teleport", "swap", "ghost", "false_alarm"):
        e = report[key]
        ci = "–" if e["ci95"] is None else f"{e['ci95'][0]:.0%} – {e['ci95'][1]:.0%}"
        loc = e.get("localisation_s")
        where = "" if loc is None else f"{loc['median']:.2f} / {loc['p90']:.2f}"
        name = "false alarms (controls)" if key == "false_alarm" else f"{key} detected"
        table.add_row(name, f"{e['rate']:.0%}", ci, str(e["n"]), where)
    Console().print(table)


@click.command("corrupt-bench")
@click.option(
    "--videos",
    "videos",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    multiple=True,
    required=True,
    help="Clean clips (repeat the option for each).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    help="Keep the corrupted set here (default: a temporary folder).",
)
@project_option(
    "Also judge the set: import it into this project as cases (needs --profile).",
    required=False, file_okay=False,
)  # fmt: skip
@click.option("--profile", help="Model profile of --project to judge with (needs --project).")
@click.option(
    # literal bound and default, not judge's (importing judge would slow every `--help`)
    "--continuity", "windows", type=click.IntRange(1, 16),
    help="Continuity windows the with-scan batch offers at the Physics gates [default: 3].",
)  # fmt: skip
@click.option("--goal", help='Goal text of the imported cases [default: "Complete the task '
              'shown."].')  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")  # fmt: skip
@click.pass_context
def corrupt_bench(
    ctx: click.Context,
    videos: tuple[Path, ...],
    out: Path | None,
    project_dir: Path | None,
    profile: str | None,
    windows: int | None,
    goal: str | None,
    as_json: bool,
) -> None:
    """Build the corrupted set of VIDEOS (each as teleport, swap, ghost and an unedited
    re-encode), scan every clip, and report per kind the detection rate (a window overlaps the
    edit), false alarms on the controls and the localisation error, with 95 % case-bootstrap
    intervals over the source clips.

    With --project and --profile the set is also imported as cases and judged twice, without
    and with the scan's windows offered (--continuity), by the queue's own worker here; a
    corrupted clip counts as detected when its Physics score is below its re-encode's."""
    if (project_dir is None) != (profile is None):
        raise click.UsageError("--project and --profile go together: give both to judge the "
                               "set, or neither")  # fmt: skip
    if project_dir is None and (windows is not None or goal is not None):
        raise click.UsageError("--continuity and --goal need --project and --profile")
    from sim.synthetic import corrupt_set
    from storage.media.continuity import evaluate

    if project_dir is None or profile is None:
        with tempfile.TemporaryDirectory(prefix="wb-corrupt-") as tmp:
            folder = out or Path(tmp)
            report = evaluate(_trials(corrupt_set(list(videos), folder)))
    else:
        report = _judged(ctx, list(videos), out, project_dir, profile, windows, goal)
    if as_json:
        click.echo(json.dumps(report))
    else:
        _table(report)
        if "judge" in report:
            from app.cli._corrupt_judge import print_judge_table

            print_judge_table(report["judge"])


def _judged(ctx: click.Context, videos: list[Path], out: Path | None, project_dir: Path,
            profile: str, windows: int | None, goal: str | None) -> dict[str, Any]:  # fmt: skip
    """The scan's report with a ``judge`` section: the set imported, judged without and with
    the scan's windows, both batches run to completion here."""
    import app.cli._corrupt_judge as cj
    from app.cli._jobs_cmds import worker
    from judge import JUDGE_KIND
    from sim.synthetic import corrupt_set
    from storage import CONTINUITY_KIND, Project
    from storage.media.continuity import evaluate

    windows = cj.DEFAULT_WINDOWS if windows is None else windows
    goal = cj.DEFAULT_GOAL if goal is None else goal
    with Project.open(project_dir) as project:
        cj.check_project(project, profile)  # before anything is built or written
        with tempfile.TemporaryDirectory(prefix="wb-corrupt-") as tmp:
            folder = out or Path(tmp)
            clips = cj.import_set(project, corrupt_set(videos, folder), folder, goal)
        report = evaluate(cj.project_trials(project, clips))
        batches = cj.queue_batches(project, clips, profile, windows)
    # the real `workbench worker --drain`: its signal handling, log lines and job kinds
    ctx.invoke(worker, project_dir=project_dir, drain=True, kinds=(JUDGE_KIND, CONTINUITY_KIND))
    with Project.open(project_dir) as project:
        report["judge"] = cj.judge_report(project, clips, batches, profile, goal)
    return report


COMMANDS = [corrupt, corrupt_bench]
