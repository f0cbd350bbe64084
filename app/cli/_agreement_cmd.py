"""``workbench agreement``: the agreement table (and leaderboard) from the command line."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from app.cli._blind_cmds import passphrase_option, require_lead
from app.cli._options import project_option

if TYPE_CHECKING:
    from storage import ProjectPanel


# the agreement rows' CSV header: AgreementRow's fields and the reason a row is empty
AGREEMENT_COLUMNS = (
    "group", "evaluator", "axis", "metric", "estimate", "ci_low", "ci_high", "n", "why_empty",
)  # fmt: skip


def _clean(v: object) -> object:
    return None if isinstance(v, float) and math.isnan(v) else v


@click.command()
@project_option()
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
@click.option(
    "--disagreements", is_flag=True,
    help="Print the disagreement queue instead: videos by |judge − consensus| on Final, then "
    "by the raters' Task spread (no bootstrap).",
)  # fmt: skip
@click.option(
    "--judge", "judge_name", help="The judge evaluator of --disagreements (default: first)."
)
@passphrase_option()
def agreement(
    project_dir: Path,
    study_id: str | None,
    human_success: str,
    n_boot: int,
    seed: int,
    as_json: bool,
    csv_out: Path | None,
    paired: tuple[str, str] | None,
    disagreements: bool,
    judge_name: str | None,
    passphrase: str | None,
) -> None:
    """Human–human reliability and judge–human agreement, with 95% case-bootstrap CIs."""
    from annotation import coverage_table, paired_difference
    from storage import Project, agreement_report, evaluator, rated_panel

    what = "the disagreement queue" if disagreements else "the agreement table and leaderboard"
    require_lead(project_dir, passphrase, what)
    hs: Literal["rated", "max"] = "max" if human_success == "max" else "rated"
    if disagreements:  # no bootstrap: the queue needs only the panel
        with Project.open(project_dir, readonly=True) as project:
            panel_data = rated_panel(project, study_id=study_id)
        _print_queue(panel_data, study_id, hs, judge_name, as_json, csv_out)
        return
    with Project.open(project_dir, readonly=True) as project:
        report = agreement_report(
            project, study_id=study_id, human_success=hs, n_boot=n_boot, seed=seed
        )
    data = report.data
    rows = [
        {k: _clean(v) for k, v in r.as_dict().items()} | {"why_empty": r.why_empty()}
        for r in report.agreement.rows
    ]
    deltas = []
    if paired:
        a, b = (evaluator(data, name) for name in paired)
        assert a is not None and b is not None  # named, so found or refused
        for axis in ("task", "physics", "final"):
            for metric in ("r", "ccc", "mae", "bias"):
                d = paired_difference(
                    data.panel, a, b, metric, axis, human_success=hs, n_boot=n_boot, seed=seed
                )
                deltas.append({k: _clean(v) for k, v in d.as_dict().items()})
    if csv_out is not None:
        _write_csv(csv_out, rows, AGREEMENT_COLUMNS)
    if as_json:
        out = {
            "videos": data.panel.n_videos,
            "rated_videos": report.n_rated,
            "study": study_id,
            "evaluators": [e.name for e in data.evaluators],
            "n_boot": n_boot,
            "seed": seed,
            "ci": report.agreement.ci,
            "human_success": hs,
            "agreement": rows,
            "leaderboard": [
                {k: _clean(v) for k, v in r.items()} for r in report.leaderboard.to_rows()
            ],
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
    for line in report.describe():
        click.echo(line)
    click.echo(f"{'group':<32} {'evaluator':<24} {'axis':<8} {'metric':<10} estimate [CI]  n")
    for r in rows:
        est = r["estimate"]
        lo, hi = r["ci_low"], r["ci_high"]
        ci = "" if lo is None else f" [{lo:.3f}, {hi:.3f}]"
        val = "—" if est is None else f"{est:.3f}"
        why = f"  ({r['why_empty']})" if r["why_empty"] else ""
        click.echo(f"{r['group']:<32} {r['evaluator']:<24} {r['axis']:<8} {r['metric']:<10} "
                   f"{val}{ci}  n={r['n']}{why}")  # fmt: skip
    for row in deltas:
        lo, hi = row["ci_low"], row["ci_high"]
        ci = "" if lo is None else f" [{lo:+.3f}, {hi:+.3f}]"
        delta = "—" if row["delta"] is None else f"{row['delta']:+.3f}"
        click.echo(f"Δ {row['evaluator_a']} − {row['evaluator_b']} {row['axis']} "
                   f"{row['metric']}: {delta}{ci}  n={row['n']}")  # fmt: skip


def _print_queue(
    data: ProjectPanel,
    study_id: str | None,
    human_success: Literal["rated", "max"],
    judge: str | None,
    as_json: bool,
    csv_out: Path | None,
) -> None:
    from annotation import Disagreement
    from storage import disagreements

    queue = disagreements(data, judge, human_success=human_success)
    rows = queue.to_rows()
    if csv_out is not None:
        _write_csv(csv_out, rows, [f.name for f in dataclasses.fields(Disagreement)])
    if as_json:
        out = {
            "videos": data.panel.n_videos,
            "study": study_id,
            "evaluator": queue.evaluator,
            "human_success": human_success,
            "disagreements": rows,
        }
        sys.stdout.write(json.dumps(out) + "\n")
        return
    against = (
        f"against judge {queue.evaluator}"
        if queue.evaluator
        else "no judge run, so ranked by the raters' Task spread only"
    )
    click.echo(f"Disagreement queue: {len(rows)} video{'s' if len(rows) != 1 else ''} · {against}")
    click.echo(f"{'video':<14} {'|judge−cons| S':>14} {'spread T':>9} {'cons S':>7} "
               f"{'judge S':>7} {'ratings':>7}")  # fmt: skip

    def f(v: object) -> str:
        return "—" if v is None else f"{v:.1f}"

    for r in rows:
        click.echo(f"{r['video_id']:<14} {f(r['gap']):>14} {f(r['spread']):>9} "
                   f"{f(r['consensus']):>7} {f(r['judge']):>7} {r['n_ratings']:>7}")  # fmt: skip


def _write_csv(path: Path, rows: Sequence[Mapping[str, object]], columns: Sequence[str]) -> None:
    """The rows under a header of ``columns`` (a header even when there are no rows)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(columns))
        w.writeheader()
        w.writerows(rows)


@click.command()
@project_option()
@click.option("--study", "study_id", help="Only this study's production panel.")
@click.option("--json", "as_json", is_flag=True)
@passphrase_option()
def ablation(
    project_dir: Path, study_id: str | None, as_json: bool, passphrase: str | None
) -> None:
    """Rubric ablation (spec §5.5): re-score recorded gate decisions with a gate removed or all
    gates counted independently; MAE against the holistic ratings."""
    from storage import Project, rubric_ablation

    require_lead(project_dir, passphrase, "the rubric ablation")
    with Project.open(project_dir, readonly=True) as project:
        table = rubric_ablation(project, study_id=study_id)
    rows = [{k: _clean(v) for k, v in r.items()} for r in table.to_rows()]
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    for r in rows:
        mae = "—" if r["mae"] is None else f"{r['mae']:.3f}"
        delta = "" if r["delta_mae"] is None else f" ({r['delta_mae']:+.3f})"
        click.echo(f"{r['axis']:<8} {r['variant']:<16} MAE {mae}{delta}  n={r['n_records']}")
