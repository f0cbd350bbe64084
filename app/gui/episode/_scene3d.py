"""The scene graph at the playhead in 3D (vispy): objects as boxes at their poses, relations as
edges between their centres, the held object highlighted, and the agent's belief as ghost
boxes for the objects it gets wrong (drawn where the belief puts them, in red). Physics
episodes add the end effector's path up to the playhead (a purple line, its tip a dot) and the
points where objects touch anything at the playhead (yellow dots).

The canvas (an OpenGL surface) is made the first time the tab is shown, so a window that never
opens it never creates a GL context for it. Drag to orbit, wheel to zoom (vispy's turntable).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from sim.review import mismatches
from sim.world import SceneGraph

# the 12 triangles of a unit cube around the origin, and its 8 corners
_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
_FACES = np.array([
    [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
    [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
])  # fmt: skip
COLOURS = {"held": (0.95, 0.6, 0.1, 1.0), "ghost": (0.9, 0.15, 0.15, 0.35)}
BASE = (0.45, 0.6, 0.85, 1.0)
SURFACE = (0.75, 0.7, 0.62, 1.0)
DISH = (0.45, 0.72, 0.5, 1.0)
HEATER = (0.3, 0.3, 0.34, 1.0)
PATH = (0.45, 0.2, 0.6, 1.0)
CONTACT = (0.95, 0.85, 0.1, 1.0)  # yellow: apart from the green dishes
Points = Sequence[tuple[float, float, float]]


def colour(tags: frozenset[str]) -> tuple[float, float, float, float]:
    """The table (a fixed surface) in wood; heaters dark; things to put things on (plates,
    boards, pans) green; everything else blue — so nothing disappears against the table."""
    if "heater" in tags:
        return HEATER
    if "surface" in tags or "container" in tags:
        return SURFACE if "fixed" in tags else DISH
    return BASE


def boxes(graph: SceneGraph, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and faces of the listed objects' boxes (yaw about z)."""
    verts, faces = [], []
    for k, oid in enumerate(ids):
        n = graph.nodes[oid]
        c, s = np.cos(n.yaw), np.sin(n.yaw)
        rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        v = (_CORNERS * np.asarray(n.size)) @ rot.T + np.asarray(n.pos)
        verts.append(v)
        faces.append(_FACES + 8 * k)
    if not verts:
        return np.zeros((0, 3)), np.zeros((0, 3), int)
    return np.vstack(verts), np.vstack(faces)


class Scene3D(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.lay = QVBoxLayout(self)
        self.lay.setContentsMargins(0, 0, 0, 0)
        self.legend = QLabel(
            "blue: objects · green: dishes · dark: heaters · orange: held · red ghosts: wrong "
            "beliefs · purple: arm path · yellow: contacts"
        )
        self.legend.setToolTip(
            "Boxes are the scene graph's objects at their poses (green: plates, boards, pans; "
            "dark: heaters; orange: the held one); lines join related objects; red ghosts sit "
            "where the agent's belief puts what it gets wrong; the purple line is the end "
            "effector's path up to the playhead; yellow dots are where objects touch anything"
        )
        self.legend.setWordWrap(True)
        self.legend.setMaximumHeight(40)
        self.lay.addWidget(self.legend)
        self.canvas: Any = None
        self.view: Any = None
        self._framed = False  # the camera was fitted to the scene once
        self._pending: tuple[SceneGraph, SceneGraph | None, Points, Points] | None = None
        self.shown_ghosts: list[str] = []
        self.shown_path = 0  # points of the arm's path drawn
        self.shown_contacts = 0

    def _make(self) -> None:
        import vispy  # type: ignore[import-untyped]

        vispy.use(app="pyside6")
        from vispy import scene  # type: ignore[import-untyped]

        canvas = scene.SceneCanvas(keys=None, bgcolor="white")
        canvas.native.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        view = canvas.central_widget.add_view()
        view.camera = scene.TurntableCamera(fov=35, distance=2.2, elevation=28, azimuth=-60,
                                            center=(0, 0, 0.4))  # fmt: skip
        self.solid = scene.visuals.Mesh(parent=view.scene, shading=None)
        self.ghost = scene.visuals.Mesh(parent=view.scene, shading=None)
        self.ghost.set_gl_state("translucent", depth_test=False)
        self.edges = scene.visuals.Line(parent=view.scene, connect="segments",
                                        color=(0.2, 0.2, 0.2, 1.0), width=2)  # fmt: skip
        self.path = scene.visuals.Line(parent=view.scene, color=PATH, width=2)
        self.tip = scene.visuals.Markers(parent=view.scene)
        self.contacts = scene.visuals.Markers(parent=view.scene)
        for marks in (self.tip, self.contacts):
            marks.set_gl_state("translucent", depth_test=False)  # seen through the boxes
        # everything exists before the canvas joins the layout: showing it may re-enter here
        self.canvas, self.view = canvas, view
        self.lay.addWidget(canvas.native, 1)

    def showEvent(self, event: Any) -> None:
        if self.canvas is None:
            self._make()
        super().showEvent(event)
        if self._pending is not None:  # what the playhead moved to while the tab was hidden
            self.show_graph(*self._pending)

    def show_graph(
        self, graph: SceneGraph, belief: SceneGraph | None = None, path: Points = (),
        contacts: Points = (),
    ) -> None:  # fmt: skip
        self._pending = (graph, belief, path, contacts)
        if self.view is None or not self.isVisible():  # drawn when the tab is shown
            return
        held = graph.held()
        ids = [k for k in sorted(graph.nodes) if graph.nodes[k].visible or k == held]
        verts, faces = boxes(graph, ids)
        if not self._framed and len(verts):  # frame the scene once; then the user's camera
            # on the things on the table, not the table: it would fill the view with wood
            things = [k for k in ids if "surface" not in graph.nodes[k].tags] or ids
            tv, _ = boxes(graph, things)
            lo, hi = tv.min(axis=0), tv.max(axis=0)
            self.view.camera.center = tuple((lo + hi) / 2)
            self.view.camera.distance = max(0.3, 1.8 * float(np.linalg.norm(hi - lo)))
            self._framed = True
        colours = []
        for oid in ids:
            n = graph.nodes[oid]
            c = COLOURS["held"] if oid == held else colour(n.tags)
            colours.extend([c] * 12)
        self.solid.set_data(vertices=verts, faces=faces,
                            face_colors=np.array(colours) if colours else None)  # fmt: skip
        segs = []
        for _kind, a, b in sorted(graph.relations):
            if a in graph.nodes and b in graph.nodes:
                segs += [graph.nodes[a].pos, graph.nodes[b].pos]
        self.edges.set_data(pos=np.array(segs, float) if segs else np.zeros((0, 3)))
        wrong = sorted({m.obj for m in mismatches(graph, belief)} & set(belief.nodes)
                       ) if belief is not None else []  # fmt: skip
        self.shown_ghosts = wrong
        if belief is not None and wrong:
            gv, gf = boxes(belief, wrong)
            self.ghost.set_data(vertices=gv * [1, 1, 1] + [0, 0, 0.002], faces=gf,
                                color=COLOURS["ghost"])  # fmt: skip
            self.ghost.visible = True
        else:
            self.ghost.visible = False
        self._arm(path, contacts)
        self.canvas.update()

    def _arm(self, path: Points, contacts: Points) -> None:
        self.shown_path, self.shown_contacts = len(path), len(contacts)
        self.path.visible = len(path) >= 2
        if self.path.visible:
            self.path.set_data(pos=np.array(path, float))
        self.tip.visible = bool(path)
        if path:
            self.tip.set_data(np.array(path[-1:], float), face_color=PATH, size=10,
                              edge_width=0)  # fmt: skip
        self.contacts.visible = bool(contacts)
        if contacts:
            self.contacts.set_data(np.array(contacts, float), face_color=CONTACT, size=7,
                                   edge_width=0)  # fmt: skip
