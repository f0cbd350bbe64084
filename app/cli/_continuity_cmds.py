"""Continuity commands (docs/continuity.md): ``continuity scan VIDEO…`` on plain files, no
project needed; ``continuity status`` and ``continuity queue`` on a project's stored scans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from app.cli._options import project_option


@click.group()
def continuity() -> None:
    """Find candidate discontinuities (jumps, swaps, overlays) on every frame of a video."""


def scan_record(file: str, scan: Any) -> dict[str, Any]:
    """What ``scan --json`` prints for one file (docs/continuity.md lists the fields)."""
    keys = ("start_s", "end_s", "score", "reason", "kind", "peak_s")
    return {
        "file": file,
        "duration_s": scan.duration_s,
        "frames": scan.frame_count,
        "seconds": scan.seconds,
        "windows": [{k: getattr(w, k) for k in keys} for w in scan.windows],
    }


@continuity.command()
@click.argument("videos", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file, one per line.")
def scan(videos: tuple[Path, ...], as_json: bool) -> None:
    """Scan video files (no project); each file's windows, best first."""
    from storage.media import MediaError
    from storage.media.continuity import scan_video

    for path in videos:  # every name checked before the first (slow) scan
        if not path.is_file():
            raise MediaError(path, "no such file" if not path.exists() else "not a file")
    console = None
    for path in videos:
        record = scan_record(str(path), scan_video(path))
        if as_json:
            # flushed per file: a reader streaming the output sees each file as it is done
            click.echo(json.dumps(record))
            continue
        if console is None:
            from rich.console import Console

            console = Console()
        _print_table(console, record)


def _print_table(console: Any, record: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    head = (f"[bold]{escape(record['file'])}[/]: {record['duration_s']:.2f} s, "
            f"{record['frames']} frames, scanned in {record['seconds']:.2f} s")  # fmt: skip
    console.print(head)
    if not record["windows"]:
        console.print("  no candidate windows")
        return
    table = Table("from s", "to s", "peak s", "score", "kind", "reason", box=None, padding=(0, 1))
    for w in record["windows"]:
        table.add_row(f"{w['start_s']:.2f}", f"{w['end_s']:.2f}", f"{w['peak_s']:.2f}",
                      f"{w['score']:.1f}", w["kind"], escape(w["reason"]))  # fmt: skip
    console.print(table)


@continuity.command()
@project_option()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(project_dir: Path, as_json: bool) -> None:
    """How many of the project's video files are scanned, missing a scan, or queued."""
    from storage import Project, continuity_status

    with Project.open(project_dir) as project:
        st = continuity_status(project)
    if as_json:
        click.echo(json.dumps(st.to_dict(), indent=2))
        return
    stale = f", {st.stale} of an older version" if st.stale else ""
    click.echo(f"{st.videos} video file(s): {st.scanned} scanned, {st.missing} missing a scan "
               f"({st.queued} queued{stale}); scan version {st.version}")  # fmt: skip
    if st.missing > st.queued:
        click.echo(f"queue the rest with `workbench continuity queue --project {project_dir}`")


@continuity.command()
@project_option()
def queue(project_dir: Path) -> None:
    """Queue a scan job for every video file missing a current scan (run by `workbench worker`)."""
    from storage import Project, queue_continuity_scans

    with Project.open(project_dir) as project:
        n = queue_continuity_scans(project)
    hint = f"; run them with `workbench worker --project {project_dir} --drain`" if n else ""
    click.echo(f"queued {n} scan(s){hint}")


COMMANDS: list[click.Command] = [continuity]
