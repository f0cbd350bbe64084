"""Goal and initial scene, always visible above the video."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.gui.common import AnnotateState


class CasePanel(QFrame):
    """Shows the case goal (large) next to the initial-scene image f₁."""

    def __init__(self, state: AnnotateState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.setFrameShape(QFrame.Shape.StyledPanel)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        self.image = QLabel(self)
        self.image.setFixedSize(192, 108)
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image.setToolTip("Initial scene (f₁)")
        lay.addWidget(self.image)
        text = QVBoxLayout()
        self.title = QLabel(self)
        self.title.setStyleSheet("color: palette(mid); font-size: 11px;")
        self.goal = QLabel(self)
        self.goal.setWordWrap(True)
        self.goal.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f = self.goal.font()
        f.setPointSize(f.pointSize() + 3)
        f.setBold(True)
        self.goal.setFont(f)
        text.addWidget(self.title)
        text.addWidget(self.goal, 1)
        lay.addLayout(text, 1)
        state.video_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        st = self.state
        if st.project is None or st.video is None:
            self.title.setText("")
            self.goal.setText("Pick a video from the list on the left.")
            self.image.clear()
            return
        case = st.project.case(st.video.case_id)
        self.title.setText(f"GOAL · case {case.id} · video {st.video.id}")
        self.goal.setText(case.goal)
        pix = QPixmap(str(st.project.media_path(case.initial_image)))
        self.image.setPixmap(
            pix.scaled(
                self.image.size(),
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        )
