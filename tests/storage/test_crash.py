"""A process killed with SIGKILL mid-annotation loses no committed decision."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from annotation import Answer
from storage import Project, import_cases

WRITER = textwrap.dedent(
    """
    import sys, itertools
    from annotation import Answer
    from storage import Project
    p = Project.open(sys.argv[1])
    video = p.videos("stack_blocks")[0].id
    gates = ["T1", "T2", "T3", "P1", "P2", "P3", "P4"]
    for k in itertools.count():
        sg = p.annotations.add_subgoal("stack_blocks", "crash", source=f"obj{k}", action="move")
        for g in gates:
            p.annotations.set_answer(video, "crash", sg.id, g, Answer.PASS)
            print(f"{sg.id} {g}", flush=True)   # printed only after the commit returned
    """
)


def test_sigkill_mid_annotation_keeps_every_committed_decision(
    tmp_path: Path, cases_dir: Path
) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path / "p")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None
    committed = []
    for line in proc.stdout:
        committed.append(line.split())
        if len(committed) >= 60:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    with Project.open(tmp_path / "p") as p:
        video = p.videos("stack_blocks")[0].id
        stored = p.annotations.answers(video, "crash")
        for sg_id, gate in committed:
            assert stored[int(sg_id)][gate] is Answer.PASS
        assert p.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
