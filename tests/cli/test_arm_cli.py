"""``workbench arm``: a lab's own arm file, added as a profile, runs a shipped scenario end to
end, replays hash for hash, shows by name in ``sim episodes``; an edit of the project's copy is
refused with the reason, and adding the name again makes a version the old episodes never see.
Run as a user runs it (subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sim.mujoco import WB6

JOINTS = ",".join(WB6.arm_joints)


def wb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, check=False
    )


def add(name: str, mjcf: Path, project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return wb("arm", "add", name, str(mjcf), "--ee-site", WB6.ee_site, "--arm-joints", JOINTS,
              "--gripper", "gripper", "--project", str(project), *extra)  # fmt: skip


def one_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


def test_a_lab_arm_runs_replays_and_keeps_its_version(tmp_path: Path) -> None:
    lab = tmp_path / "lab" / "our-six-axis.xml"  # the lab's file: wb6's text under its own name
    lab.parent.mkdir()
    lab.write_text(WB6.mjcf.read_text())
    project = tmp_path / "p"

    out = add("lab-six", lab, project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "pick-and-place: 3/3 trials succeeded" in out.stdout
    assert "added lab-six@1: 1 file(s)" in out.stdout

    out = wb("sim", "run", "stack-two", "--mode", "physics", "--arm", "lab-six",
             "--project", str(project), "--json")  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "completed" and result["success"] is True
    episode = result["episode"][:8]
    out = wb("sim", "replay", episode, "--project", str(project))
    assert out.returncode == 0 and "identical" in out.stdout, out.stdout + out.stderr
    out = wb("sim", "episodes", "--project", str(project))
    (row,) = [line.split() for line in out.stdout.splitlines() if episode in line]
    assert row[:4] == [episode, "stack-two", "physics", "lab-six@1"]

    out = wb("arm", "show", "lab-six", "--project", str(project), "--json")
    shown = json.loads(out.stdout)
    assert shown["label"] == "lab-six@1" and shown["episodes"] == [result["episode"]]
    assert shown["report"]["ok"] is True and shown["source"] == str(lab)
    copy = Path(shown["path"])
    assert copy.is_relative_to(project / "arms") and copy.name == "our-six-axis.xml"

    # someone edits the project's copy: replaying (and running) it is refused, with the reason
    original = copy.read_text()
    copy.write_text(original.replace('friction="1.6 0.02 0.002"', 'friction="1.2 0.02 0.002"'))
    line = one_error(wb("sim", "replay", episode, "--project", str(project)))
    assert f"episode {episode}: arm lab-six@1: {copy} changed since the profile was added" in line
    assert "replaying it needs the arm files it ran with" in line
    line = one_error(wb("sim", "run", "stack-two", "--arm", "lab-six", "--project", str(project)))
    assert "arm lab-six@1:" in line and "changed since the profile was added" in line
    # adding the lab's (unchanged) file again adds nothing and puts the recorded bytes back
    out = add("lab-six", lab, project, "--trials", "1")
    assert "unchanged: lab-six@1 already is this arm" in out.stdout, out.stdout + out.stderr
    assert copy.read_text() == original
    assert "identical" in wb("sim", "replay", episode, "--project", str(project)).stdout

    # the lab changes its arm: the same name is version 2, and the episode keeps version 1
    lab.write_text(original.replace('friction="1.6 0.02 0.002"', 'friction="1.5 0.02 0.002"'))
    out = add("lab-six", lab, project, "--trials", "1")
    assert "added lab-six@2" in out.stdout, out.stdout + out.stderr
    out = wb("arm", "list", "--project", str(project))
    rows = [line.split() for line in out.stdout.splitlines()[1:]]
    assert [r[:2] for r in rows] == [["lab-six@1", "our-six-axis.xml"],
                                     ["lab-six@2", "our-six-axis.xml"]]  # fmt: skip
    for ref, users in (("lab-six@1", [result["episode"]]), ("lab-six", [])):
        shown = json.loads(wb("arm", "show", ref, "--project", str(project), "--json").stdout)
        assert shown["episodes"] == users
    assert "identical" in wb("sim", "replay", episode, "--project", str(project)).stdout
    out = wb("sim", "run", "stack-two", "--mode", "symbolic", "--arm", "lab-six@1",
             "--project", str(project))  # fmt: skip
    assert out.returncode == 0, out.stderr

    line = one_error(wb("arm", "remove", "lab-six", "--project", str(project)))
    assert f"lab-six@1 by 2 episode(s) ({episode}, " in line
    out = wb("arm", "remove", "lab-six@2", "--project", str(project))
    assert out.returncode == 0 and "removed lab-six@2" in out.stdout
    line = one_error(wb("sim", "run", "stack-two", "--arm", "lab-six@2", "--project", str(project)))
    assert "arm 'lab-six' has no version 2 (lab-six@1)" in line


def test_a_refused_add_makes_no_project(tmp_path: Path) -> None:
    lab = tmp_path / "lab.xml"
    lab.write_text(WB6.mjcf.read_text())
    project = tmp_path / "new" / "p"
    out = wb("arm", "add", "lab", str(lab), "--ee-site", "tcp", "--arm-joints", JOINTS,
             "--gripper", "gripper", "--project", str(project))  # fmt: skip
    assert "lab.xml: no site named 'tcp'" in one_error(out)
    assert not (tmp_path / "new").exists()
    narrow = tmp_path / "narrow.xml"
    narrow.write_text(WB6.mjcf.read_text().replace('range="0 0.045"', 'range="0 0.01"'))
    out = add("slim", narrow, project, "--trials", "0")
    assert "error: the gripper opens only 2.0 cm" in out.stdout  # the report, then the refusal
    assert "so 'slim' was not added; fix the arm, or add it anyway with --force" in one_error(out)
    assert not (tmp_path / "new").exists()
    empty = tmp_path / "empty"  # an empty folder given as the project: left empty
    empty.mkdir()
    one_error(add("slim", narrow, empty, "--trials", "0"))
    assert list(empty.iterdir()) == []
