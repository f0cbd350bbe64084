"""``workbench video info|frame``: frame-exact access without the GUI."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.group()
def video() -> None:
    """Inspect video files: index, frame times, exact frames."""


@video.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON, including every frame's time.")
def info(file: Path, as_json: bool) -> None:
    """Frame count, size, rotation, fps, duration, keyframes and every frame's source time."""
    from storage.media import index_video

    ix = index_video(file)
    times = [round(ix.time_of(i), 6) for i in range(ix.frame_count)]
    summary = {
        "file": str(file),
        "frame_count": ix.frame_count,
        "width": ix.width,
        "height": ix.height,
        "rotation": ix.rotation,
        "fps": round(ix.fps, 6),
        "duration_s": round(ix.duration_s, 6),
        "codec": ix.codec,
        "keyframes": [int(k) for k in ix.keyframes],
    }
    if as_json:
        click.echo(json.dumps(summary | {"frame_times_s": times}))
        return
    for key, value in summary.items():
        if key != "keyframes":
            click.echo(f"{key:>12}: {value}")
    first = [int(k) for k in ix.keyframes[:5]]
    click.echo(f"{'keyframes':>12}: {len(ix.keyframes)} (first at {first})")


@video.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.argument("n", type=int)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="PNG to write.")
def frame(file: Path, n: int, out: Path) -> None:
    """Write exactly frame N (0-based, presentation order) of FILE as a PNG."""
    from storage.media import FrameReader, index_video, write_png

    ix = index_video(file)
    if not 0 <= n < ix.frame_count:
        raise click.BadParameter(f"{file} has frames 0..{ix.frame_count - 1}", param_hint="N")
    with FrameReader(file, ix) as reader:
        write_png(out, reader.read(n))
    click.echo(f"frame {n} at {ix.time_of(n):.6f} s -> {out}")
