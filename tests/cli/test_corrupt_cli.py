"""``workbench corrupt`` and ``workbench corrupt-bench`` on generated clips."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from app.cli._main import cli
from sim.synthetic import write_demo_cases


def test_corrupt_then_bench(tmp_path: Path) -> None:
    cases = write_demo_cases(tmp_path / "cases", seed=0)
    clips = [next((c / "videos").glob("*gen_c*.mp4")) for c in cases[:2]]
    out = tmp_path / "t.mp4"
    res = CliRunner().invoke(
        cli, ["corrupt", str(clips[0]), "--kind", "teleport", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    truth = json.loads(Path(f"{out}.json").read_text("utf-8"))
    assert truth["kind"] == "teleport" and f"{truth['start_s']:.3f}" in res.output
    args = ["corrupt-bench", "--json", "--out", str(tmp_path / "set")]
    res = CliRunner().invoke(cli, [*args, *(x for c in clips for x in ("--videos", str(c)))])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["sources"] == 2 and report["trials"] == 8
    assert {k: report[k]["rate"] for k in ("teleport", "swap", "ghost", "false_alarm")} == {
        "teleport": 1.0, "swap": 1.0, "ghost": 1.0, "false_alarm": 0.0}  # fmt: skip
    assert len(list((tmp_path / "set").glob("*.mp4.json"))) == 8  # the set, with its truth
    res = CliRunner().invoke(cli, ["corrupt", str(clips[0]), "--kind", "melt", "--out", str(out)])
    assert res.exit_code == 2 and "melt" in res.output
    (tmp_path / "short.mp4").write_bytes(b"")
    res = CliRunner().invoke(cli, ["corrupt", str(tmp_path / "short.mp4"), "--kind", "swap",
                                   "--out", str(tmp_path / "o.mp4")])  # fmt: skip
    assert res.exit_code == 2 and "short.mp4" in res.output
