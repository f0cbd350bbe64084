"""The episode browser in a real X server: columns for persona, assistant, arm and metrics that
filter and sort (numbers as numbers), and a failure attribution and note edited under the list,
stored on the rater's history so the window's Undo takes them back and the list follows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QTableWidgetItem

from app.gui._main_window import MainWindow
from app.gui.episode import EpisodeBrowser
from app.gui.episode._browser import COLUMNS
from sim.episode import open_scenario, run_episode
from sim.interact import run_interactive, store_episode_metrics
from sim.users import PROFILES
from storage import Project

pytestmark = pytest.mark.gui


@pytest.fixture
def three_episodes(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A novice with the scripted assistant, an expert with the oracle, and an agent alone."""
    root = tmp_path / "eps"
    ids: dict[str, str] = {}
    with Project.create(root) as p:
        for persona, assistant in (("novice", "scripted"), ("expert", "oracle")):
            ep = run_interactive(bound=open_scenario("cheeseburger"), persona=PROFILES[persona],
                                 assistant=assistant, project=p)  # fmt: skip
            assert ep.episode_id is not None
            store_episode_metrics(p, ep.episode_id)
            ids[persona] = ep.episode_id
        # a recall between the others: "50%" sorts after "100%" as text, before it as a number
        p.episodes.set_metrics(ids["novice"], {"detection_recall": 0.5})
        p.episodes.set_metrics(ids["expert"], {"detection_recall": 1.0})
        agent = run_episode(open_scenario("stack-two"), mode="symbolic", project=p)
        assert agent.episode_id is not None
        ids["agent"] = agent.episode_id
    return root, ids


def item(b: EpisodeBrowser, episode_id: str, column: str) -> QTableWidgetItem:
    row = b.row_of(episode_id)
    assert row is not None
    got = b.table.item(row, COLUMNS.index(column))
    assert got is not None
    return got


def cell(b: EpisodeBrowser, episode_id: str, column: str) -> str:
    return item(b, episode_id, column).text()


def shown_ids(b: EpisodeBrowser) -> list[str]:
    t = b.table
    return [str(i.data(Qt.ItemDataRole.UserRole)) for r in range(t.rowCount())
            if not t.isRowHidden(r) and (i := t.item(r, 0)) is not None]  # fmt: skip


def press(key: Qt.Key, mod: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """A key pressed where the keyboard focus is, as a person presses it."""
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None
    QTest.keyClick(target, key, mod)


def test_columns_filter_and_numeric_sort(
    make_window: Callable[[Path], MainWindow], three_episodes: tuple[Path, dict[str, str]]
) -> None:
    root, ids = three_episodes
    w = make_window(root)
    w.set_workspace("episode")
    b = w.episode.browser
    heads = [b.table.horizontalHeaderItem(c) for c in range(b.table.columnCount())]
    header = [h.text() for h in heads if h is not None]
    assert {"persona", "assistant", "arm", "in time", "recall", "note"} <= set(header)
    assert (cell(b, ids["novice"], "persona"), cell(b, ids["novice"], "assistant")) == (
        "novice", "scripted")  # fmt: skip
    assert cell(b, ids["expert"], "recall") == "100%" and cell(b, ids["novice"], "recall") == "50%"
    assert cell(b, ids["agent"], "arm") == "wb6" and cell(b, ids["agent"], "persona") == ""
    assert cell(b, ids["novice"], "arm") == ""  # not recorded for it: blank, not a guess
    assert shown_ids(b) == [ids["agent"], ids["expert"], ids["novice"]]  # newest first
    assert "persona" in b.filter.placeholderText() and "note" in b.filter.placeholderText()
    QTest.keyClicks(b.filter, "novice")
    assert shown_ids(b) == [ids["novice"]]
    b.filter.clear()
    assert len(shown_ids(b)) == 3
    # a click on the header sorts by that column, numbers by value, blanks first
    col = COLUMNS.index("recall")
    section = b.table.horizontalHeader()
    x = section.sectionViewportPosition(col) + section.sectionSize(col) // 2
    at = QPoint(x, section.height() // 2)
    QTest.mouseClick(section.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert [cell(b, i, "recall") for i in shown_ids(b)] == ["", "50%", "100%"]
    assert shown_ids(b) == [ids["agent"], ids["novice"], ids["expert"]]
    QTest.mouseClick(section.viewport(), Qt.MouseButton.LeftButton, pos=at)  # and back
    assert [cell(b, i, "recall") for i in shown_ids(b)] == ["100%", "50%", ""]
    # the sort holds through a refresh (an edit, undo or redo re-reads the list)
    b.refresh()
    assert [cell(b, i, "recall") for i in shown_ids(b)] == ["100%", "50%", ""]


def test_attribution_and_note_edited_in_the_window_undo_with_ctrl_z(
    make_window: Callable[[Path], MainWindow],
    three_episodes: tuple[Path, dict[str, str]],
) -> None:
    root, ids = three_episodes
    eid = ids["novice"]
    w = make_window(root)
    w.set_workspace("episode")
    b = w.episode.browser
    project = w.state.project
    assert project is not None
    assert not b.party.isEnabled()  # nothing selected, nothing to edit
    rect = b.table.visualItemRect(item(b, eid, "scenario"))
    QTest.mouseClick(b.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert b.selected_id() == eid and b.party.isEnabled()
    assert eid[:8] in b.editing.text()
    # who failed, and why: pick the party, type the reason, Enter
    b.party.setFocus()
    b.party.setCurrentIndex(b.party.findText("user"))
    b.reason.setFocus()
    QTest.keyClicks(b.reason, "ignored the warning about the bun")
    press(Qt.Key.Key_Return)
    att = project.batches.attribution(eid)
    assert att is not None and (att.party, att.reason, att.source) == (
        "user", "ignored the warning about the bun", "edited")  # fmt: skip
    assert cell(b, eid, "attributed to") == "user (edited)"
    tip = item(b, eid, "attributed to").toolTip()
    assert "ignored the warning about the bun" in tip and "edited" in tip
    assert w.actions_by_id["edit.undo"].text() == f"&Undo attribute episode {eid[:8]} to user"
    # a note: type it, Enter
    b.note.setFocus()
    QTest.keyClicks(b.note, "bun slid at t40; check the grasp")
    press(Qt.Key.Key_Return)
    stored = project.notes.note(eid)
    assert stored is not None and stored.note == "bun slid at t40; check the grasp"
    assert cell(b, eid, "note") == "bun slid at t40; check the grasp"
    assert b.selected_id() == eid  # the list kept its place through the refresh
    # … and the editor still shows the stored attribution
    assert (b.party.currentText(), b.reason.text()) == ("user", "ignored the warning about the bun")
    # the window's Undo, from the keyboard, as a person presses it: the note goes first …
    press(Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert project.notes.note(eid) is None
    assert cell(b, eid, "note") == "" and b.note.text() == ""
    # … then the attribution
    w.undo()
    assert project.batches.attribution(eid) is None
    assert cell(b, eid, "attributed to") == "" and b.party.currentIndex() == -1
    w.redo()
    assert cell(b, eid, "attributed to") == "user (edited)" and b.party.currentText() == "user"
    # a reason being typed survives saving the note beside it
    b.reason.setText("draft, not saved yet")
    b.note.setText("second thoughts")
    b.note_button.click()
    assert project.notes.note(eid) is not None and cell(b, eid, "note") == "second thoughts"
    assert b.reason.text() == "draft, not saved yet" and b.party.currentText() == "user"
    # the filter reads the new columns too
    b.filter.setText("edited")
    assert shown_ids(b) == [eid]


def test_a_bad_edit_says_why_and_changes_nothing(
    make_window: Callable[[Path], MainWindow], three_episodes: tuple[Path, dict[str, str]]
) -> None:
    root, ids = three_episodes
    w = make_window(root)
    w.set_workspace("episode")
    b = w.episode.browser
    project = w.state.project
    assert project is not None
    b.select(ids["expert"])
    b.reason.setText("no party chosen")
    b.attribute_button.click()
    assert "choose who" in b.message.text()
    assert project.batches.attribution(ids["expert"]) is None
    assert project.history.undo_label(w.state.rater) is None


def test_silenced_replies_and_how_a_run_ended_are_in_the_list(
    make_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    """Model replies silenced (still invalid after the repair budget) beside success, with
    repairs, tokens and cost in the tooltip; a failed run's status says why when hovered."""
    from judge.models.loopback import BadArgs, FakeServer, Status
    from tests.judge.llm_participant_helpers import assistant_script, project_with

    script = assistant_script()

    def respond(body: dict[str, object], n: int) -> object:
        if n == 6:
            return Status(400, "too long", no_retry=True)
        return BadArgs("respond", "nope") if n in (1, 2) else script(body, n)

    root = tmp_path / "p"
    with FakeServer(respond) as srv:  # type: ignore[arg-type]
        p = project_with(root, asst=srv)
        with pytest.raises(Exception, match="HTTP 400"):
            run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["balanced"],
                            assistant="llm", assistant_options={"profile": "asst",
                                                                "repairs": 0},
                            project=p)  # fmt: skip
        (ep,) = p.episodes.list()
        p.close()
    w = make_window(root)
    w.set_workspace("episode")
    b = w.episode.browser
    assert cell(b, ep.id, "status") == "failed"
    assert "HTTP 400" in item(b, ep.id, "status").toolTip()
    assert cell(b, ep.id, "silenced") == "2/7"  # calls 1 and 2 (from 0) silenced; 6 failed
    tip = item(b, ep.id, "silenced").toolTip()
    assert "7 model replies: 4 valid, 0 repaired" in tip and "2 silenced, 1 failed" in tip
    assert "600 tokens in" in tip  # the failed request had no reply to count


def test_an_empty_list_says_where_episodes_come_from(
    make_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    root = tmp_path / "empty"
    Project.create(root).close()
    w = make_window(root)
    w.set_workspace("episode")
    text = w.episode.browser.message.text()
    assert text.startswith("No episodes yet") and "Import bundle" in text
    assert w.episode.browser.message.isVisible()
