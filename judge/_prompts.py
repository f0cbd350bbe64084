"""The one prompt helper of every judge and agent: versioned templates, and untrusted text as data.

**Templates.** A prompt version is a folder of ``.md`` templates under ``resources/prompts/``
(``ego2act-judge-v2``, ``iq-judge-v1``, ``ivg-user-v1`` …), read with ``importlib.resources``.
:class:`Templates` reads one, fills its ``$placeholders`` (a missing value raises KeyError) and
gives the digest a run stores with its configuration: sha256 over every template's name and
bytes, so a run says exactly which texts it was asked with. A template's own leading and
trailing whitespace is not part of the prompt; values go in as given.

**Data blocks.** Instructions come only from templates, which hold no supplied text. Whatever
comes from elsewhere — a video's goal and plans, a user's words, an assistant's reply, scene
descriptions, tool results — goes in as JSON between the markers :data:`DATA_OPEN` and
:data:`DATA_CLOSE`, which no supplied text can forge or close early: ``<`` and ``>`` inside the
JSON are written as ``\\u003c`` and ``\\u003e`` (still the same JSON strings).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template
from typing import Any

DATA_OPEN = "<<<DATA"
DATA_CLOSE = "DATA>>>"


@dataclass(frozen=True)
class Templates:
    """One prompt version's folder of templates, ``resources/prompts/<folder>/``."""

    folder: str

    def text(self, name: str) -> str:
        """The template ``name`` (no placeholder filled), without its outer whitespace."""
        return _text(self.folder, name)

    def render(self, name: str, **values: object) -> str:
        """The template ``name`` with its ``$placeholders`` filled from ``values``.

        Raises:
            KeyError: a placeholder without a value.
        """
        return Template(self.text(name)).substitute({k: str(v) for k, v in values.items()})

    def digest(self) -> str:
        """sha256 over every template (name and text): stored with each run's configuration."""
        return _digest(self.folder)


@cache
def _text(folder: str, name: str) -> str:
    path = resources.files("resources.prompts").joinpath(folder, name)
    return path.read_text("utf-8").strip()


@cache
def _digest(folder: str) -> str:
    h = hashlib.sha256()
    files = resources.files("resources.prompts").joinpath(folder)
    for entry in sorted(files.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            h.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return h.hexdigest()


def data_json(data: Any, *, sort_keys: bool = False) -> str:
    """``data`` as JSON that cannot contain a DATA marker (``<`` and ``>`` escaped)."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=sort_keys)
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def data_block(data: Any, note: str | None = None, *, sort_keys: bool = False) -> str:
    """``data`` between the DATA markers, after the line(s) ``note`` if given (the template text
    that says what the block holds)."""
    block = f"{DATA_OPEN}\n{data_json(data, sort_keys=sort_keys)}\n{DATA_CLOSE}"
    return block if note is None else f"{note}\n{block}"
