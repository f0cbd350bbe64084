"""The maintainer's map names only what exists.

``docs/architecture.md`` is where a newcomer learns which room holds what; a path or module it
names that was moved or renamed sends them looking for nothing. Every file path in backticks
(``storage/jobs/_worker.py``, ``resources/prompts/``) must exist, and every dotted module path
(``storage.jobs._registry``, ``judge.models``) must be a module or package of the tree, its
trailing attribute, if any, defined in it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("docs/architecture.md",)
TOPS = ("app", "sim", "judge", "annotation", "storage", "resources", "packaging", "bench",
        "docs", "tests", ".ci")  # fmt: skip
PRODUCT = ("app", "sim", "judge", "annotation", "storage")

CODE = re.compile(r"`([^`\n]+)`")
_TOPS = "|".join(re.escape(t) for t in TOPS)
PATH = re.compile(rf"^(?:{_TOPS})/[\w./<>*\-]*$")
DOTTED = re.compile(rf"^(?:{'|'.join(PRODUCT)})(?:\.\w+)+$")


def named(doc: str) -> tuple[list[str], list[str]]:
    """The file paths and dotted module names a document names in backticks."""
    paths, modules = [], []
    for token in CODE.findall((ROOT / doc).read_text(encoding="utf-8")):
        token = token.split(":")[0].strip().rstrip(",.")
        if PATH.match(token):
            paths.append(token)
        elif DOTTED.match(token):
            modules.append(token)
    return paths, modules


def path_exists(token: str) -> bool:
    if "<" in token or "*" in token:  # a pattern such as media/ab/<sha256>.*: its folder
        token = token.split("<")[0].split("*")[0].rsplit("/", 1)[0]
    return (ROOT / token).exists()


def _module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _defines(path: Path, name: str) -> bool:
    """``name`` is bound at the top of ``path`` (def, class, assignment or import)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        elif isinstance(node, ast.Import | ast.ImportFrom) and any(
            (a.asname or a.name.split(".")[0]) == name for a in node.names
        ):
            return True
    return False


def module_exists(dotted: str) -> bool:
    if _module_file(dotted) is not None:
        return True
    module, _, attribute = dotted.rpartition(".")
    path = _module_file(module)
    return path is not None and _defines(path, attribute)


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_and_module_named_exists(doc: str) -> None:
    paths, modules = named(doc)
    assert paths and modules, f"{doc} names no path or module: has the pattern gone stale?"
    missing = [p for p in paths if not path_exists(p)] + [
        m for m in modules if not module_exists(m)
    ]
    assert not missing, f"{doc} names what does not exist: {', '.join(sorted(set(missing)))}"


def test_a_stale_name_is_seen() -> None:
    assert not path_exists("judge/_kinds.py")
    assert not module_exists("storage._kinds")
    assert module_exists("storage.jobs")
    assert module_exists("storage.jobs._registry.register")
    assert not module_exists("storage.jobs._registry.no_such_name")
