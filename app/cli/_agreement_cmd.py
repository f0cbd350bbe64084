"""``workbench agreement``: the agreement table (and leaderboard) from the command line."""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path
from typing import Literal

import click


def _clean(v: object) -> object:
    return None if isinstance(v, float) and math.isnan(v) else v


@click.command()
@click.option("--project", "project_dir", required=True, type=click.Path(path_type=Path))
@click.option("--study", "study_id", help="Only this study's production panel.")
@click.option(
    "--human-success", type=click.Choice(["rated", "max"]), default="rated", show_default=True,
    help="Verified human-success recordings: as rated, or set to the rubric maximum.",
)  # fmt: skip
@click.option("--n-boot", type=int, default=1000, show_default=True, help="Case resamples.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (agreement and leaderboard).")
@click.option("--csv", "csv_out", type=click.Path(path_type=Path), help="Write the rows as CSV.")
@click.option(
    "--paired", nargs=2, metavar="A B",
    help="Also report Δ = A − B of r, CCC, MAE and bias per axis (same resamples), "
    "e.g. two judges or two scoring rules of one.",
)  # fmt: skip
def agreement(
    project_dir: Path,
    study_id: str | None,
    human_success: str,
    n_boot: int,
    seed: int,
    as_json: bool,
    csv_out: Path | None,
    paired: tuple[str, str] | None,
) -> None:
    """Human–human reliability and judge–human agreement, with 95% case-bootstrap CIs."""
    from annotation import agreement_table, coverage_table, leaderboard, paired_difference
    from storage import Project, load_panel

    hs: Literal["rated", "max"] = "max" if human_success == "max" else "rated"
    with Project.open(project_dir) as project:
        data = load_panel(project, study_id=study_id)
    table = agreement_table(data.panel, data.evaluators, human_success=hs, n_boot=n_boot, seed=seed)
    rows = [{k: _clean(v) for k, v in r.items()} for r in table.to_rows()]
    deltas = []
    if paired:
        by_name = {e.name: e for e in data.evaluators}
        missing = [n for n in paired if n not in by_name]
        if missing:
            known = ", ".join(by_name) or "none"
            raise click.BadParameter(f"no evaluator {missing[0]!r} (known: {known})")
        for axis in ("task", "physics", "final"):
            for metric in ("r", "ccc", "mae", "bias"):
                d = paired_difference(
                    data.panel, by_name[paired[0]], by_name[paired[1]], metric, axis,
                    human_success=hs, n_boot=n_boot, seed=seed,
                )  # fmt: skip
                deltas.append({k: _clean(v) for k, v in d.as_dict().items()})
    if csv_out is not None:
        with csv_out.open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["group"])
            w.writeheader()
            w.writerows(rows)
    if as_json:
        board = leaderboard(data.panel, data.evaluators, human_success=hs, n_boot=n_boot, seed=seed)
        out = {
            "videos": data.panel.n_videos,
            "evaluators": [e.name for e in data.evaluators],
            "n_boot": n_boot,
            "seed": seed,
            "human_success": hs,
            "agreement": rows,
            "leaderboard": [{k: _clean(v) for k, v in r.items()} for r in board.to_rows()],
            "paired": deltas,
            "coverage": {
                e.name: [
                    {k: _clean(v) for k, v in r.items()}
                    for r in coverage_table(e, data.panel.models).to_rows()
                ]
                for e in data.evaluators
            },
        }
        sys.stdout.write(json.dumps(out) + "\n")
        return
    for r in rows:
        est = r["estimate"]
        lo, hi = r["ci_low"], r["ci_high"]
        ci = "" if lo is None else f" [{lo:.3f}, {hi:.3f}]"
        val = "—" if est is None else f"{est:.3f}"
        click.echo(f"{r['group']:<32} {r['evaluator']:<24} {r['axis']:<8} {r['metric']:<10} "
                   f"{val}{ci}  n={r['n']}")  # fmt: skip
    for row in deltas:
        lo, hi = row["ci_low"], row["ci_high"]
        ci = "" if lo is None else f" [{lo:+.3f}, {hi:+.3f}]"
        delta = "—" if row["delta"] is None else f"{row['delta']:+.3f}"
        click.echo(f"Δ {row['evaluator_a']} − {row['evaluator_b']} {row['axis']} "
                   f"{row['metric']}: {delta}{ci}  n={row['n']}")  # fmt: skip


@click.command()
@click.option("--project", "project_dir", required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def ablation(project_dir: Path, as_json: bool) -> None:
    """Rubric ablation (spec §5.5): re-score recorded gate decisions with a gate removed or all
    gates counted independently; MAE against the holistic ratings."""
    from annotation import ablation_table
    from storage import Project, load_gate_records

    with Project.open(project_dir) as project:
        records, task, physics = load_gate_records(project)
    table = ablation_table(records, task, physics)
    rows = [{k: _clean(v) for k, v in r.items()} for r in table.to_rows()]
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    if not rows:
        click.echo("no video has both recorded gate decisions and holistic ratings")
    for r in rows:
        mae = "—" if r["mae"] is None else f"{r['mae']:.3f}"
        delta = "" if r["delta_mae"] is None else f" ({r['delta_mae']:+.3f})"
        click.echo(f"{r['axis']:<8} {r['variant']:<16} MAE {mae}{delta}  n={r['n_records']}")
