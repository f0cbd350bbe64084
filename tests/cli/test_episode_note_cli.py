"""``workbench episode note`` and ``workbench batch attribute``: a person's note and attribution,
stored on the rater's undo stack (WB_RATER, else the OS user: the stack the GUI undoes)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from app.cli._main import cli
from storage import Project


def _project(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "p"
    with Project.create(root) as p:
        eid = p.episodes.create(
            scenario="burger", scenario_sha="s", family="kitchen", mode="symbolic",
            agent="oracle", seed=1, delta=1.0, contract_json="{}", contract_hash="h", config={},
        )  # fmt: skip
    return root, eid


def _run(*args: str, rater: str = "carol") -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args), env={"WB_RATER": rater})
    return res.exit_code, res.output


def test_note_is_stored_on_the_raters_stack_and_cleared_by_empty_text(tmp_path: Path) -> None:
    root, eid = _project(tmp_path)
    code, out = _run("episode", "note", eid[:8], "bun slid off at t40", "--project", str(root))
    assert code == 0, out
    assert out.strip() == f"episode {eid[:8]}: note saved (undo it in the workbench as carol)"
    with Project.open(root) as p:
        assert p.notes.note(eid).note == "bun slid off at t40"  # type: ignore[union-attr]
        assert p.history.undo_label("carol") == f"note on episode {eid[:8]}"
    code, out = _run("episode", "note", eid, "", "--project", str(root), "--rater", "dan")
    assert code == 0 and "note cleared" in out, out
    with Project.open(root) as p:
        assert p.notes.note(eid) is None
        assert p.history.undo("dan") == f"clear note on episode {eid[:8]}"
        assert p.notes.note(eid) is not None


def test_note_on_a_missing_episode_is_one_error_line(tmp_path: Path) -> None:
    root, _ = _project(tmp_path)
    code, out = _run("episode", "note", "ffffffff", "x", "--project", str(root))
    assert code == 2
    assert out.strip() == "error: episode id: no episode 'ffffffff' in this project"


def test_batch_attribute_goes_on_the_raters_stack(tmp_path: Path) -> None:
    root, eid = _project(tmp_path)
    code, out = _run("batch", "attribute", eid, "user", "ignored advice", "--project", str(root))
    assert code == 0, out
    with Project.open(root) as p:
        rec = p.batches.attribution(eid)
        assert rec is not None and (rec.party, rec.source) == ("user", "edited")
        assert p.history.undo("carol") == f"attribute episode {eid[:8]} to user"
        assert p.batches.attribution(eid) is None
