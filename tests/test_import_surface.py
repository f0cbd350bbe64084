"""Packages talk through their public surface (``pkg/__init__.py`` and ``__all__``).

A module may import a private module (``_name``) only of its own package or a package inside it;
``bench/`` and ``docs/`` use the product the way a user's script would and import nothing from
``tests/``. import-linter checks the layers (pyproject.toml); this checks what it cannot express.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("app", "sim", "judge", "annotation", "storage")


def imports(path: Path) -> list[tuple[int, list[str]]]:
    """Per import statement: its line and the dotted names it may load (module, module.name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found.append((node.lineno, names))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, [a.name]) for a in node.names]
    return found


def private_owner(module: str) -> str | None:
    """The package that owns the first private component of ``module``, if it has one."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def package_of(path: Path) -> str:
    """The package a file belongs to: its folder (``pkg/__init__.py`` and ``pkg/_x.py`` alike)."""
    return ".".join(path.relative_to(ROOT).parent.parts)


def violations() -> list[str]:
    found: list[str] = []
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            here = package_of(path)
            for line, names in imports(path):
                for module in names:
                    owner = private_owner(module)
                    if module.split(".")[0] not in PRODUCT or owner is None:
                        continue
                    if not (here == owner or here.startswith(owner + ".")):
                        found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
                        break
    for top in ("bench", "docs"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for line, names in imports(path):
                if names[0].split(".")[0] == "tests":
                    found.append(f"{path.relative_to(ROOT)}:{line} imports {names[0]}")
    return found


def test_packages_use_each_others_public_surface_only() -> None:
    assert violations() == []


def test_the_check_knows_what_is_private() -> None:
    assert private_owner("sim.world._graph") == "sim.world"
    assert private_owner("sim.world.SceneGraph") is None
    assert private_owner("app.gui._main_window.MainWindow") == "app.gui"
