"""Dock layouts per workspace: kept when you leave a workspace, restored when you come back,
written to the settings folder on exit and to a file of your choice on request.

A layout is Qt's own ``QMainWindow.saveState`` (dock positions, sizes, visibility, tabs), kept
per workspace name; a file holds all of them, as JSON with base64 states and a version, so a
lab can hand one arrangement to every annotator.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from annotation import UserError

FORMAT = "workbench-layouts/1"
STATE_VERSION = 1  # bump when docks are added or renamed: older states are then ignored


class LayoutError(UserError, ValueError):
    """A layout file that cannot be used; the message names the file and why."""


class Layouts:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.states: dict[str, bytes] = {}
        if path.is_file():
            try:
                self.states = read_layouts(path)
            except LayoutError:
                self.states = {}  # a broken settings file must not stop the window opening

    def keep(self, workspace: str, state: bytes | bytearray | memoryview) -> None:
        self.states[workspace] = bytes(state)

    def get(self, workspace: str) -> bytes | None:
        return self.states.get(workspace)

    def save(self, path: Path | None = None) -> None:
        write_layouts(path or self.path, self.states)


def write_layouts(path: Path, states: dict[str, bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    spaces = {k: base64.b64encode(v).decode() for k, v in sorted(states.items())}
    doc = {"format": FORMAT, "version": STATE_VERSION, "workspaces": spaces}
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    tmp.replace(path)  # never half a file, even if the machine stops mid-write


def read_layouts(path: Path) -> dict[str, bytes]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise LayoutError(f"{path}: not a layout file ({err})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise LayoutError(f"{path}: format: expected {FORMAT!r}")
    if doc.get("version") != STATE_VERSION:
        raise LayoutError(
            f"{path}: written for another arrangement of the window "
            f"(version {doc.get('version')!r}, this one is {STATE_VERSION})"
        )
    spaces = doc.get("workspaces")
    if not isinstance(spaces, dict):
        raise LayoutError(f"{path}: workspaces: expected an object")
    try:
        return {str(k): base64.b64decode(v, validate=True) for k, v in spaces.items()}
    except (TypeError, ValueError) as err:
        raise LayoutError(f"{path}: workspaces: not a saved layout ({err})") from None
