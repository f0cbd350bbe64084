"""Exporting the teleop workspace's demonstrations: the dialog, the job, and the line that says
what was written.

The formats are offered by labels that say what each writes (a LeRobot dataset is parquet and
an MP4 per camera, rendered from the recorded states). The export runs off the GUI thread; when
it ends, :class:`ExportLine` says where it wrote, how many demonstrations and frames and how many
camera videos, on a line of its own (the workspace's status line is rewritten by every status)
and in the window's status bar.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QSizePolicy,
    QWidget,
)

from sim.teleop import DEMO_FORMATS, Exported, export_demonstrations
from storage import Project

#: the export formats as the dialog offers them: each label says what is written
EXPORT_FORMATS = {
    "LeRobot dataset (parquet + an MP4 per camera)": "lerobot",
    "robomimic HDF5": "robomimic",
}
assert set(EXPORT_FORMATS.values()) == set(DEMO_FORMATS)
STATUS_BAR_MS = 15_000


def export_job(root: Path, fmt: str, out: Path, scenario: str | None) -> Exported:
    """On a worker thread, with its own connection (connections stay on their thread)."""
    with Project.open(root) as project:
        return export_demonstrations(project, fmt, out, scenario=scenario)


def ask_export(parent: QWidget, project_root: Path) -> tuple[str, Path] | None:
    """Ask for a format and where to write it; None when the person cancels."""
    label, ok = QInputDialog.getItem(parent, "Export demonstrations", "Format",
                                     list(EXPORT_FORMATS), 0, False)  # fmt: skip
    if not ok:
        return None
    fmt = EXPORT_FORMATS[label]
    default = "dataset" if fmt == "lerobot" else "demos.hdf5"
    path, _ = QFileDialog.getSaveFileName(
        parent, "Export to (a new folder for LeRobot, a file for robomimic)",
        str(project_root.parent / default),
    )  # fmt: skip
    return (fmt, Path(path)) if path else None


class ExportLine(QLabel):
    """What the last export is doing or wrote; also shown in the window's status bar. Its
    tooltip lists the video files. It never widens the window (a long path is clipped)."""

    def __init__(self) -> None:
        super().__init__("")
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def say(self, text: str, tip: str = "") -> None:
        self.setText(text)
        self.setToolTip(tip or text)
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text, STATUS_BAR_MS)

    def exported(self, result: Exported) -> None:
        self.say(result.describe(), "\n".join(str(p) for p in result.videos))

    def failed(self, err: object) -> None:
        self.say(f"export failed: {err}")
