"""A hand-built scene description so world rules and the engine are tested without MuJoCo."""

from __future__ import annotations

from sim.world import Layout, ObjectInfo, Placement, SceneInfo

TABLE_TOP = 0.75


def _obj(
    id_: str, type_: str, half: tuple[float, float, float], tags: str, **kw: object
) -> ObjectInfo:
    z = TABLE_TOP + half[2]
    pos = kw.pop("pos", (0.0, 0.0, z))
    return ObjectInfo(
        id_, type_, half, pos, tags=frozenset(tags.split(",")) if tags else frozenset(), **kw
    )  # type: ignore[arg-type]


def fake_scene() -> SceneInfo:
    objects = [
        _obj("table", "table", (0.6, 0.7, 0.02), "surface,fixed", pos=(0.0, 0.0, 0.73)),
        _obj("brick_red", "brick", (0.024, 0.024, 0.024), "graspable", color="red"),
        _obj("brick_blue", "brick", (0.024, 0.024, 0.024), "graspable", color="blue"),
        _obj("brick_green", "brick", (0.024, 0.024, 0.024), "graspable", color="green"),
        _obj("mug_red", "mug", (0.04, 0.04, 0.05), "graspable", color="red"),
        _obj("mug_blue", "mug", (0.04, 0.04, 0.05), "graspable", color="blue"),
        _obj(
            "drawer", "drawer", (0.12, 0.15, 0.06), "container,openable,fixed",
            pos=(0.25, 0.3, 0.81), attrs={"open": 0.0},
            interior=((0.0, 0.0, 0.0), (0.1, 0.13, 0.05)),
        ),
        _obj("plate", "plate", (0.1, 0.1, 0.01), "surface"),
        _obj("bun", "bun", (0.04, 0.04, 0.02), "graspable"),
        _obj("patty", "patty", (0.04, 0.04, 0.015), "graspable,cookable", attrs={"cooked": 0.0}),
        _obj("cheese", "cheese", (0.035, 0.035, 0.015), "graspable"),
        _obj("pan", "pan", (0.1, 0.1, 0.025), "container,surface"),
        _obj("burner", "burner", (0.12, 0.12, 0.02), "surface,heater,switchable,fixed",
             pos=(0.25, -0.3, 0.77), attrs={"on": False}),
    ]  # fmt: skip
    return SceneInfo(
        "test", {o.id: o for o in objects}, "table", TABLE_TOP, (-0.3, 0.35, -0.4, 0.4)
    )


def layout(*placements: Placement, **attrs: dict[str, object]) -> Layout:
    return Layout("test", tuple(placements), dict(attrs))  # type: ignore[arg-type]
