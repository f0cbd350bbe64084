"""The README's Benchmarks section names every bench that ``bench/run`` runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_lists_every_bench_that_bench_run_runs() -> None:
    run = (ROOT / "bench" / "run").read_text()
    benches = sorted(set(re.findall(r"bench/([a-z_]+\.py)", run)))
    assert len(benches) >= 5, benches  # video, judge, agreement, sim, gui at least
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Benchmarks\n", 1)[1].split("\n## ", 1)[0]
    missing = [b for b in benches if f"`bench/{b}`" not in section]
    assert not missing, f"README's Benchmarks section does not describe {missing}"
