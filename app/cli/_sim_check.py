"""What ``workbench sim check`` prints: the arm report, and the per-scenario capability table."""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sim.episode import CapabilityTable
from sim.mujoco import ArmReport, Capability, RunOutcome


def report_json(report: ArmReport, table: CapabilityTable | None) -> dict[str, Any]:
    out: dict[str, Any] = dataclasses.asdict(report) | {"ok": report.ok}
    if table is not None:
        out["scenarios"] = table.to_json()
    return out


def home_line(report: ArmReport) -> str:
    posture = ", ".join(f"{k} {v:.3f}" for k, v in report.home.get("posture", {}).items())
    return f"home: {report.home.get('source', '?')} ({posture})"


def _grasps(cap: Capability) -> str:
    if not cap.grasps:
        return "—"
    bad = [g for g in cap.grasps if not g.ok]
    if not bad:
        widest = max(g.width for g in cap.grasps)
        return f"{len(cap.grasps)}/{len(cap.grasps)} (widest {widest * 100:.1f} cm)"
    return f"[red]{len(cap.grasps) - len(bad)}/{len(cap.grasps)}[/]"


def _run(run: RunOutcome | None) -> str:
    if run is None:
        return "—"
    return "[green]success[/]" if run.success else "[red]goal not met[/]"


def print_table(console: Console, table: CapabilityTable, *, ran: bool) -> None:
    rows = table.rows
    head = f"scenarios: {table.can} of {len(rows)} within reach and grasp"
    if table.ran:
        agree = sum(bool(c.agrees) for c in table.ran)
        head += f" · physics runs as predicted: {agree}/{len(table.ran)}"
    console.print(head)
    columns = ["scenario", "reach", "grasp"] + (["symbolic", "physics"] if ran else []) + ["arm"]
    t = Table(*columns, box=None)
    for c in rows:
        reach = f"{c.reached}/{c.poses}"
        if c.reached < c.poses:
            reach = f"[red]{reach}[/]"
        runs = {r.mode: r for r in c.runs}
        verdict = "[green]can[/]" if c.can else "[red]cannot[/]: " + escape("; ".join(c.why))
        cells = [c.scenario, reach, _grasps(c)]
        if ran:
            cells += [_run(runs.get("symbolic")), _run(runs.get("physics"))]
        t.add_row(*cells, verdict)
    console.print(t)
    for c in rows:  # a run that failed says why, and a surprise is called one
        phys = c.physics
        if phys is not None and not phys.success:
            console.print(f"  {c.scenario} (physics): {escape(phys.why)}")
        if c.agrees is False:
            console.print(f"  [yellow]{c.scenario}: the physics run did not go as predicted[/]")
        sym = next((r for r in c.runs if r.mode == "symbolic"), None)
        if sym is not None and not sym.success:
            console.print(
                f"  {c.scenario} (symbolic): {escape(sym.why)}; the reference itself fails, "
                "so physics was not run"
            )
    for line in table.messages:
        console.print(escape(line))
