"""``workbench corrupt`` and ``workbench corrupt-bench``: the paper's controlled corruptions
(Ego2Act §8.2), one clip at a time or as a benchmark of the continuity scan."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import click

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
    from storage.continuity import Trial, scan_video

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
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")  # fmt: skip
def corrupt_bench(videos: tuple[Path, ...], out: Path | None, as_json: bool) -> None:
    """Build the corrupted set of VIDEOS (each as teleport, swap, ghost and an unedited
    re-encode), scan every clip, and report per kind the detection rate (a window overlaps the
    edit), false alarms on the controls and the localisation error, with 95 % case-bootstrap
    intervals over the source clips."""
    from sim.synthetic import corrupt_set
    from storage.continuity import evaluate

    with tempfile.TemporaryDirectory(prefix="wb-corrupt-") as tmp:
        folder = out or Path(tmp)
        report = evaluate(_trials(corrupt_set(list(videos), folder)))
    if as_json:
        click.echo(json.dumps(report))
    else:
        _table(report)


COMMANDS = [corrupt, corrupt_bench]
