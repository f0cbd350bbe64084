"""``workbench score``: the scoring engine from the command line."""

from __future__ import annotations

import json

import click


def _fmt(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.3f}"


@click.command()
@click.option("--task", required=True, help="Task levels per subgoal, e.g. 0,3,3 ('?' unresolved).")
@click.option(
    "--physics",
    required=True,
    help="Physics levels per subgoal, e.g. -,4,4 ('-' unattempted, NA, '?' unresolved).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def score(task: str, physics: str, as_json: bool) -> None:
    """Compute T100, P100, S and coverage from per-subgoal levels."""
    from annotation import parse_levels
    from annotation import score as score_levels

    try:
        t = parse_levels(task, axis="--task")
        p = parse_levels(physics, axis="--physics")
        result = score_levels(t, p)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    d = result.as_dict()
    if as_json:
        click.echo(json.dumps({k: d[k] for k in ("T100", "P100", "S", "coverage")}))
        return
    click.echo(
        f"T100 {_fmt(result.t100)}  P100 {_fmt(result.p100)}  S {_fmt(result.s)}  "
        f"coverage {_fmt(result.coverage)}"
    )
