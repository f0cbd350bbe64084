"""Grounding and parsing: references to ids, or unknown / ambiguous / not_visible."""

from __future__ import annotations

import pytest

from sim.symbolic import initial_graph
from sim.world import Action, ActionFormatError, Placement, SceneInfo, Verb, ground, parse_command
from tests.sim.fakescene import layout


@pytest.fixture
def graph(info: SceneInfo):  # type: ignore[no-untyped-def]
    lay = layout(
        Placement("mug_red", at=(0.0, 0.2)),
        Placement("mug_blue", at=(0.0, -0.2)),
        Placement("brick_red", at=(0.1, 0.0)),
        Placement("brick_blue", on="brick_red"),
        Placement("brick_green", inside="drawer"),
        drawer={"open": 0.0},
    )
    return initial_graph(info, lay, seed=0)


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("the red brick", "brick_red"),
        ("brick_blue", "brick_blue"),
        ("the mug on the left", "mug_red"),
        ("the mug on the right", "mug_blue"),
        ("the blue cup", "mug_blue"),
        ("the brick on the red brick", "brick_blue"),
        ("the top brick", "brick_blue"),
        ("the drawer", "drawer"),
    ],
)
def test_references_resolve(graph, ref: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert ground(ref, graph).id == expected


@pytest.mark.parametrize(
    ("ref", "problem"),
    [
        ("the mug", "ambiguous"),
        ("the giraffe", "unknown"),
        ("the purple brick", "unknown"),
        ("the green brick", "not_visible"),
        ("brick_green", "not_visible"),
        ("the plate", "unknown"),  # not placed in this layout
    ],
)
def test_references_rejected(graph, ref: str, problem: str) -> None:  # type: ignore[no-untyped-def]
    res = ground(ref, graph)
    assert res.id is None and res.problem is not None
    assert res.problem.name == problem
    if problem == "ambiguous":
        assert "mug_blue" in res.problem.message and "mug_red" in res.problem.message


@pytest.mark.parametrize(
    ("said", "action"),
    [
        ("Put the patty in the pan.", Action(Verb.PLACE, "the patty", "the pan", "in")),
        ("pick up the red brick", Action(Verb.PICK, "the red brick")),
        ("grab the mug on the left", Action(Verb.PICK, "the mug on the left")),
        ("stack the red brick on top of the blue brick",
         Action(Verb.PLACE, "the red brick", "the blue brick", "on")),
        ("open the drawer", Action(Verb.OPEN, "the drawer")),
        ("shut the cabinet", Action(Verb.CLOSE, "the cabinet")),
        ("turn on the burner", Action(Verb.TURN_ON, "the burner")),
        ("switch the stove off", Action(Verb.TURN_OFF, "the stove")),
        ("push the box left 12 cm", Action(Verb.PUSH, "the box", direction="left", distance=0.12)),
        ("wait 30", Action(Verb.WAIT, ticks=30)),
    ],
)  # fmt: skip
def test_commands_parse(said: str, action: Action) -> None:
    got = parse_command(said)
    assert (got.verb, got.obj, got.target, got.relation, got.direction, got.ticks) == (
        action.verb, action.obj, action.target, action.relation, action.direction, action.ticks,
    )  # fmt: skip
    assert got.distance == pytest.approx(action.distance)
    assert Action.from_json(got.to_json()) == got


def test_not_a_command() -> None:
    with pytest.raises(ActionFormatError, match="not a command"):
        parse_command("make me a sandwich")
    with pytest.raises(ActionFormatError, match="unknown field"):
        Action.from_json({"verb": "pick", "object": "x"})
    with pytest.raises(ActionFormatError, match="verb must be one of"):
        Action.from_json({"verb": "teleport"})
