"""What the frozen bundle leaves out, what it must be told to take, and the licences it carries.

Read by packaging/workbench.spec (at build time) and packaging/build.py; no workbench import.
"""

from __future__ import annotations

import json
import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]

#: never in the bundle: test and build tools (installed by ``[dev]``), the Rerun export (a
#: 500 MB optional extra, pip-installable next to a source install), Tk, and Qt modules the
#: workbench never imports (PyInstaller would otherwise follow pyqtgraph's optional imports)
EXCLUDES = [
    "tkinter", "_tkinter", "matplotlib", "IPython", "jedi", "notebook",
    "pytest", "_pytest", "pytestqt", "pytest_xvfb", "hypothesis", "mypy", "ruff",
    "importlinter", "grimp", "pingouin", "sklearn", "seaborn", "xarray",
    "rerun", "rerun_bindings", "rerun_cli", "PIL", "vispy.testing", "ray",
    "pyarrow.flight", "pyarrow._flight", "pyarrow._s3fs", "pyarrow._gcsfs", "pyarrow._azurefs",
    "pyarrow.gandiva", "pyarrow.cuda",
    "PyQt5", "PyQt6", "PySide2",
    "PySide6.QtWebEngineCore", "PySide6.QtWebEngineWidgets", "PySide6.QtWebEngineQuick",
    "PySide6.Qt3DCore", "PySide6.QtQuick", "PySide6.QtQml", "PySide6.QtQuickWidgets",
    "PySide6.QtMultimedia", "PySide6.QtNetwork", "PySide6.QtSql", "PySide6.QtTest",
    "PySide6.QtDesigner", "PySide6.QtHelp", "PySide6.QtPdf", "PySide6.QtCharts",
]  # fmt: skip

#: files PyInstaller's hooks collect whole that the workbench never loads: pyarrow's network
#: filesystems, Flight RPC and C++ headers (only parquet is read and written; Substrait stays,
#: every pyarrow extension links it), and
#: Qt's translations (the interface is English), and Qt's GTK theme plugin (it needs GTK 3,
#: which a lab machine may not have; Qt falls back to its own style)
DROP_FILES = re.compile(
    r"(^|/)(libarrow_(flight|s3|gandiva)[^/]*|pyarrow/include/.*|pyarrow/tests/.*"
    r"|PySide6/Qt/translations/.*|PySide6/Qt/plugins/platformthemes/libqgtk3\.so)$"
)

#: imported by name at run time (storage.jobs.load_kind_modules), so analysis cannot see them
HIDDEN = ["judge", "sim.batch", "app.cli", "app.gui"]
#: packages whose modules are imported by name at run time: PyOpenGL loads its platform (EGL,
#: GLX, OSMesa) and array handlers by string, and MuJoCo's renderer needs the one it picks
HIDDEN_PACKAGES = ["OpenGL.platform", "OpenGL.arrays", "OpenGL.EGL", "OpenGL.raw.EGL",
                   "OpenGL.GLX", "OpenGL.raw.GLX", "OpenGL.osmesa", "OpenGL.raw.osmesa",
                   "mujoco.egl", "mujoco.osmesa", "mujoco.glfw"]  # fmt: skip

#: the distributions that are the workbench and its run-time dependencies, with the extras the
#: bundle ships (teleop demonstrations' formats and gamepads; not [cluster]: a cluster's nodes
#: run a Python install of the package, and Ray alone would double the bundle)
ROOT_DIST = "rollout-workbench"
SHIPPED_EXTRAS = ("demos", "devices")
# the licence files of a distribution, wherever its wheel puts them
_LICENSE_FILE = re.compile(r"(^|/)(licen[cs]e|copying|notice|authors)[^/]*$", re.IGNORECASE)


def _requirements(dist: metadata.Distribution, extras: tuple[str, ...]) -> list[str]:
    """The names of what ``dist`` needs here (markers evaluated, with ``extras`` chosen)."""
    out = []
    for text in dist.requires or []:
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
            out.append(req.name)
    return out


def _root_requirements() -> list[str]:
    """The workbench's own, read from pyproject.toml (an editable install's metadata can lag)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    texts = [*project["dependencies"]]
    for extra in SHIPPED_EXTRAS:
        texts += project["optional-dependencies"][extra]
    return [Requirement(t).name for t in texts]


def runtime_distributions() -> list[metadata.Distribution]:
    """The workbench's distribution and everything it needs at run time, transitively."""
    seen: dict[str, metadata.Distribution] = {}
    todo = [ROOT_DIST]
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-").replace(".", "-")
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[key] = dist
        todo += _root_requirements() if name == ROOT_DIST else _requirements(dist, ())
    return sorted(seen.values(), key=lambda d: d.metadata["Name"].lower())


def _licence(dist: metadata.Distribution) -> str:
    """The SPDX expression, else a one-line License field, else the trove classifiers."""
    for field in ("License-Expression", "License"):
        value = (dist.metadata.get(field) or "").strip()
        if value and "\n" not in value and len(value) <= 80:
            return value
    return ", ".join(c.split("::")[-1].strip() for c in dist.metadata.get_all("Classifier") or []
                     if c.startswith("License ::"))  # fmt: skip


#: the licence texts Debian keeps (base-files), for wheels that name a licence but ship no text
_COMMON = Path("/usr/share/common-licenses")
_SPDX_TEXT = {"LGPL-3.0": "LGPL-3", "GPL-2.0": "GPL-2", "GPL-3.0": "GPL-3",
              "Apache-2.0": "Apache-2.0", "LGPL-2.1": "LGPL-2.1", "BSD": "BSD"}  # fmt: skip


def _from_metadata(dist: metadata.Distribution, folder: Path) -> list[str]:
    """For a distribution whose wheel has no licence file (PySide6's, PyOpenGL's): what its
    metadata says, plus the full text of each licence it names, from Debian's common-licenses."""
    folder.mkdir(parents=True, exist_ok=True)
    meta = dist.metadata
    lines = [f"{meta['Name']} {dist.version}", f"License: {_licence(dist)}"]
    lines += [f"{k}: {meta[k]}" for k in ("Author", "Author-email", "Home-page") if meta.get(k)]
    lines += [f"Project-URL: {u}" for u in meta.get_all("Project-URL") or []]
    names = ["METADATA-LICENSE.txt"]
    (folder / names[0]).write_text("\n".join(lines) + "\n", "utf-8")
    for spdx, text in _SPDX_TEXT.items():
        if spdx in _licence(dist) and (_COMMON / text).is_file():
            (folder / text).write_bytes((_COMMON / text).read_bytes())
            names.append(text)
    return names


def write_licences(out: Path) -> dict[str, str]:
    """Copy every shipped distribution's licence files under ``out/<name>/`` and write
    ``out/index.json`` (name → version, licence); returns the index's licence column."""
    out.mkdir(parents=True, exist_ok=True)
    index: dict[str, dict[str, str]] = {}
    for dist in runtime_distributions():
        name = dist.metadata["Name"]
        files = [f for f in dist.files or [] if _LICENSE_FILE.search(str(f))]
        for f in files:
            source = Path(str(dist.locate_file(f)))
            if source.is_file():
                target = out / name / Path(str(f)).name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read_bytes())
        if not files:
            files = _from_metadata(dist, out / name)
        index[name] = {
            "version": dist.version,
            "license": _licence(dist),
            "files": ", ".join(sorted(Path(str(f)).name for f in files)),
        }
    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n", "utf-8")
    return {k: v["license"] for k, v in index.items()}
