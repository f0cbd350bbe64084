"""The semantic annotation of a scene object: ``<text name="object:ID" data="k=v;k=v"/>``.

Scene files say what their bodies *are* in the same MJCF that says how they collide, so a scene
author edits one file and the symbolic mode reads the same description. The format is a
``;``-separated list of ``key=value`` pairs (documented at the top of every scene file):

    type=drawer;color=white;tags=container,openable,fixed;joint=drawer_slide;closed=0;open=0.17;
    interior=drawer_interior;handle=drawer_handle;attrs=cooked:0

Anything we do not know (a key, a tag, a malformed pair) is a :class:`SceneError` naming the file
and the object, because a silently ignored typo would turn into a wrong scene graph much later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from annotation import UserError
from sim.world import TAGS, Attr

PREFIX = "object:"
KEYS = frozenset(
    {"type", "color", "tags", "attrs", "joint", "closed", "open", "off", "on", "interior", "handle"}
)


class SceneError(UserError, ValueError):
    """A scene file that cannot be used; the message names the file (and object, if any)."""


_Fail = Callable[[str], SceneError]


@dataclass(frozen=True)
class Annotation:
    """One object's parsed annotation. ``span`` is the joint values (closed/off, open/on)."""

    id: str
    type: str
    color: str | None = None
    tags: frozenset[str] = frozenset()
    attrs: dict[str, Attr] = field(default_factory=dict)
    joint: str | None = None
    span: tuple[float, float] | None = None
    interior: str | None = None
    handle: str | None = None


def parse_annotation(obj: str, data: str, *, file: str) -> Annotation:
    """Parse one object's ``data`` string; raise :class:`SceneError` naming ``file`` and ``obj``."""

    def fail(why: str) -> SceneError:
        return SceneError(f"{file}: object {obj!r}: {why}")

    fields: dict[str, str] = {}
    for part in data.split(";"):
        part = part.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            raise fail(f"expected key=value, got {part!r}")
        if key not in KEYS:
            raise fail(f"unknown key {key!r} (keys: {', '.join(sorted(KEYS))})")
        if key in fields:
            raise fail(f"key {key!r} given twice")
        fields[key] = value
    if not fields.get("type"):
        raise fail("missing type=")
    tags = frozenset(t.strip() for t in fields.get("tags", "").split(",") if t.strip())
    unknown = sorted(tags - TAGS)
    if unknown:
        raise fail(f"unknown tag(s) {', '.join(unknown)} (tags: {', '.join(sorted(TAGS))})")
    attrs = dict(_attr(i, fail) for i in fields.get("attrs", "").split(",") if i.strip())
    span: tuple[float, float] | None = None
    joint = fields.get("joint") or None
    if "openable" in tags or "switchable" in tags:
        lo_key, hi_key = ("closed", "open") if "openable" in tags else ("off", "on")
        if joint is None or lo_key not in fields or hi_key not in fields:
            raise fail(
                f"{'/'.join(sorted(tags & {'openable', 'switchable'}))} needs "
                f"joint=, {lo_key}= and {hi_key}="
            )
        span = (_number(fields[lo_key], lo_key, fail), _number(fields[hi_key], hi_key, fail))
        if span[0] == span[1]:
            raise fail(f"{lo_key}= and {hi_key}= must differ")
        attrs.setdefault(
            "open" if "openable" in tags else "on", 0.0 if lo_key == "closed" else False
        )
    elif joint is not None:
        raise fail("joint= is only for openable or switchable objects")
    if "container" in tags and not fields.get("interior"):
        raise fail("a container needs interior= (a box site marking its inside)")
    return Annotation(
        id=obj,
        type=fields["type"],
        color=fields.get("color") or None,
        tags=tags,
        attrs=attrs,
        joint=joint,
        span=span,
        interior=fields.get("interior") or None,
        handle=fields.get("handle") or None,
    )


def _number(text: str, key: str, fail: _Fail) -> float:
    try:
        return float(text)
    except ValueError:
        raise fail(f"{key}= must be a number, got {text!r}") from None


def _attr(item: str, fail: _Fail) -> tuple[str, Attr]:
    item = item.strip()
    name, colon, raw = item.partition(":")
    if not colon or not name.strip():
        raise fail(f"attrs= expects name:value items, got {item!r}")
    raw = raw.strip()
    value: Attr
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        try:
            value = float(raw)
        except ValueError:
            value = raw
    return name.strip(), value
