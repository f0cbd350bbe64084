"""The "Judge videos" dialog: which videos, which model profile, which mode; then queue."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from judge import MODES, load_profile, video_judge_refusal
from storage import Project, Video

MODE_TEXT = {
    "gated": "Gated (Ego2ActJudge: plans, T1–T3 and P1–P4 with early exit)",
    "independent": "Independent gates (ask every gate; scores both rules)",
    "simple_vqa": "Simple VQA baseline (one call, holistic levels)",
}


class JudgeDialog(QDialog):
    """Pick the scope, profile and mode; ``selection()`` gives what to queue."""

    def __init__(
        self,
        project: Project,
        current: Video | None,
        profiles: list[str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Judge videos")
        self.setMinimumWidth(520)
        self.project = project
        self.current = current
        form = QFormLayout()
        self.scopes = QButtonGroup(self)
        box = QVBoxLayout()
        n_all = len(project.videos())
        options = [("all", f"All videos in the project ({n_all})")]
        if current is not None:
            n_case = len(project.videos(current.case_id))
            options = [
                ("video", f"This video ({current.id})"),
                ("case", f"All videos of case {current.case_id} ({n_case})"),
                *options,
            ]
        for k, (key, text) in enumerate(options):
            rb = QRadioButton(text, self)
            rb.setProperty("scope", key)
            rb.setChecked(k == 0)
            self.scopes.addButton(rb)
            box.addWidget(rb)
        form.addRow("Videos", box)
        self.profile = QComboBox(self)
        self.profile.addItems(profiles)
        form.addRow("Model profile", self.profile)
        #: what the profile's server was measured to honour, or why it cannot judge videos
        self.capabilities = QLabel(self)
        self.capabilities.setWordWrap(True)
        form.addRow("", self.capabilities)
        self.mode = QComboBox(self)
        for m in MODES:
            self.mode.addItem(MODE_TEXT[m], m)
        form.addRow("Mode", self.mode)
        self.continuity = QSpinBox(self)
        self.continuity.setRange(0, 16)
        self.continuity.setSpecialValueText("off")
        self.continuity.setToolTip(
            "Offer the continuity scan's N strongest candidate windows (jumps, swaps, overlays "
            "found on every frame) at the Physics gates as places to inspect; recorded with "
            "the run. Not for the simple VQA baseline."
        )
        self.mode.currentIndexChanged.connect(
            lambda _i: self.continuity.setEnabled(self.mode.currentData() != "simple_vqa")
        )
        form.addRow("Continuity windows", self.continuity)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        if not profiles:
            hint = QLabel(
                "No model profile yet. Add one with\n"
                "  workbench judge profile add NAME --base-url URL --model MODEL\n"
                "(keys come from the environment or the OS keyring, never the project).",
                self,
            )
            hint.setStyleSheet("color: #c62828;")
            lay.addWidget(hint)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Queue jobs")
        ok.setEnabled(bool(profiles))
        self.profile.currentTextChanged.connect(self._show_capabilities)
        self._show_capabilities(self.profile.currentText())
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)

    def _show_capabilities(self, name: str) -> None:
        """The chosen profile's probe, in a line; a text-only model cannot be queued (the core
        refuses it too: ``queue_judge``)."""
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        if not name:
            self.capabilities.setText("")
            return
        profile = load_profile(self.project.profiles, name)
        refusal = video_judge_refusal(profile)
        caps = profile.capabilities
        if refusal:
            text, colour = refusal, "#c62828"
        elif caps is None:
            text = (
                f"Not probed yet: `workbench judge profile probe {name}` measures what its "
                "server honours (the client assumes the common defaults until then)."
            )
            colour = "#666666"
        else:
            text, colour = f"Probed {caps.probed_at}: {caps.summary()}", "#2e7d32"
        self.capabilities.setText(text)
        self.capabilities.setStyleSheet(f"color: {colour};")
        ok.setEnabled(refusal is None)

    def video_ids(self) -> list[str]:
        checked = self.scopes.checkedButton()
        scope = checked.property("scope") if checked else "all"
        if scope == "video" and self.current is not None:
            return [self.current.id]
        if scope == "case" and self.current is not None:
            return [v.id for v in self.project.videos(self.current.case_id)]
        return [v.id for v in self.project.videos()]

    def selection(self) -> tuple[list[str], str, str]:
        return self.video_ids(), self.profile.currentText(), str(self.mode.currentData())

    def config(self) -> dict[str, int]:
        """The JudgeConfig overrides the run records (empty: the defaults)."""
        n = self.continuity.value() if self.continuity.isEnabled() else 0
        return {"continuity_windows": n} if n else {}
