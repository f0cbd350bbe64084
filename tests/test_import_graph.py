"""No import circle anywhere in the product.

The graph has an edge from a module to every product module it imports, at the top or inside a
function (a function-local import is a circle that only waits for the first call); imports
under ``if TYPE_CHECKING:`` are left out, since they never run. A package's ``__init__``
re-exporting its own modules is an edge like any other, so a module that imports its package
back (``from sim.episode import X`` inside ``sim/episode/_y.py``) closes a circle; importing
``pkg._x`` is not counted as importing ``pkg`` (Python runs ``pkg/__init__`` first, but that
is the re-export direction, not a dependency of the module on its siblings).

import-linter (pyproject.toml) holds the layers between packages and rooms; this holds what it
does not see: circles inside one package.
"""

from __future__ import annotations

import ast
from pathlib import Path

from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("app", "sim", "judge", "annotation", "storage")


def product_modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(nodes: list[ast.stmt] | ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in ``nodes`` (or below a node) that can run."""
    children = nodes if isinstance(nodes, list) else list(ast.iter_child_nodes(nodes))
    found: list[ast.Import | ast.ImportFrom] = []
    for child in children:
        if isinstance(child, ast.Import | ast.ImportFrom):
            found.append(child)
        elif isinstance(child, ast.If) and _type_checking_block(child):
            found += _import_nodes(child.orelse)  # only the ``else:`` branch ever runs
        else:
            found += _import_nodes(child)
    return found


def imported(module: str, path: Path, is_package: bool, known: set[str]) -> set[str]:
    """The product modules ``module`` imports."""
    package = module if is_package else module.rpartition(".")[0]
    edges: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            edges |= {a.name for a in node.names if a.name in known}
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if target in known:
            edges.add(target)
        edges |= {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known}
    edges.discard(module)
    return edges


def import_graph() -> dict[str, set[str]]:
    modules = product_modules()
    known = set(modules)
    return {name: imported(name, path, pkg, known) for name, (path, pkg) in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module."""
    names = sorted(graph)
    index = {name: i for i, name in enumerate(names)}
    rows = [index[a] for a in names for _ in graph[a]]
    cols = [index[b] for a in names for b in sorted(graph[a])]
    matrix = csr_array(([1] * len(rows), (rows, cols)), shape=(len(names), len(names)))
    count, labels = connected_components(matrix, directed=True, connection="strong")
    groups: list[list[str]] = [[] for _ in range(count)]
    for name, label in zip(names, labels, strict=True):
        groups[label].append(name)
    return sorted(g for g in groups if len(g) > 1)


def test_the_product_has_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles (each line one group that imports itself):\n" + "\n".join(
        " ↔ ".join(group) for group in found
    )


def test_the_check_sees_a_circle(tmp_path: Path) -> None:
    """The graph counts function-local imports, skips TYPE_CHECKING, and sees a package that
    one of its own modules imports back."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg._a import a\n")
    (pkg / "_a.py").write_text("def a():\n    from pkg import _b\n")
    (pkg / "_b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg._a import a\n"
        "else:\n    import pkg\n"
    )
    known = {"pkg", "pkg._a", "pkg._b"}
    graph = {
        "pkg": imported("pkg", pkg / "__init__.py", True, known),
        "pkg._a": imported("pkg._a", pkg / "_a.py", False, known),
        "pkg._b": imported("pkg._b", pkg / "_b.py", False, known),
    }
    assert graph == {"pkg": {"pkg._a"}, "pkg._a": {"pkg", "pkg._b"}, "pkg._b": {"pkg"}}
    assert circles(graph) == [["pkg", "pkg._a", "pkg._b"]]
