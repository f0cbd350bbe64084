"""The predicate language: parsing with path-naming errors, three-valued evaluation, sentences."""

from __future__ import annotations

from typing import Any

import pytest

from sim.contracts import (
    ContractError,
    Event,
    Not,
    On,
    Stack,
    Truth,
    parse_predicate,
    satisfied,
    t_all,
    t_any,
    t_not,
)
from sim.world import Verb
from tests.sim.contracts.scenes import act, kitchen, pick_place, run_plan, without

T, F, U = Truth.T, Truth.F, Truth.U
IDS = set(kitchen().nodes)
BURGER = {"stack": ["plate", "bun", "patty", "cheese"]}


def _eval(d: dict[str, Any], graph: Any = None, events: list[Event] | None = None) -> Truth:
    return parse_predicate(d, known_ids=IDS).evaluate(kitchen() if graph is None else graph, events)


# -- Kleene connectives ---------------------------------------------------------------------


@pytest.mark.parametrize(("a", "expected"), [(T, F), (F, T), (U, U)])
def test_not_is_kleene(a: Truth, expected: Truth) -> None:
    assert t_not(a) is expected


@pytest.mark.parametrize(
    ("values", "all_", "any_"),
    [
        ((T, T), T, T),
        ((T, F), F, T),
        ((T, U), U, T),
        ((F, U), F, U),
        ((U, U), U, U),
        ((F, F), F, F),
    ],
)
def test_all_any_are_kleene(values: tuple[Truth, ...], all_: Truth, any_: Truth) -> None:
    assert t_all(values) is all_
    assert t_any(values) is any_


def test_unknown_is_not_satisfied() -> None:
    assert [satisfied(v) for v in (T, F, U)] == [True, False, False]


# -- state predicates on the initial kitchen -----------------------------------------------


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        ({"on": ["bun", "table"]}, T),
        ({"on": ["bun", "plate"]}, F),
        ({"in": ["mug_red", "drawer"]}, F),
        ({"held": "bun"}, F),
        ({"open": "drawer"}, F),
        ({"closed": "drawer"}, T),
        ({"closed": "bun"}, U),  # the world does not represent a bun's open state
        ({"on_state": ["burner", False]}, T),  # a switchable without the attribute is off
        ({"on_state": ["burner", True]}, F),
        ({"on_state": ["bun", True]}, U),
        ({"attr": ["patty", "cooked", ">=", 1.0]}, U),  # attribute absent
        ({"attr": ["drawer", "open", "==", 0]}, T),
        ({"attr": ["drawer", "open", "<", 0.5]}, T),
        ({"near": ["bun", "cheese", 0.3]}, T),
        ({"near": ["bun", "cheese", 0.29]}, F),
        ({"not": {"held": "bun"}}, T),
        ({"all": [{"on": ["bun", "table"]}, {"closed": "drawer"}]}, T),
        ({"any": [{"on": ["bun", "plate"]}, {"held": "bun"}]}, F),
        ({"all": [{"on": ["bun", "table"]}, {"closed": "bun"}]}, U),
        ({"any": [{"on": ["bun", "table"]}, {"closed": "bun"}]}, T),
        ({"not": {"closed": "bun"}}, U),
        (BURGER, F),
    ],
)
def test_state_predicates(pred: dict[str, Any], expected: Truth) -> None:
    assert _eval(pred) is expected


def test_attr_compares_numbers_with_every_operator() -> None:
    g, *_ = run_plan(kitchen(), [])
    cooked = {**g.nodes}
    cooked["patty"] = type(g.nodes["patty"])(
        **{**g.nodes["patty"].__dict__, "attrs": {"cooked": 1.0, "state": "grilled"}}
    )
    g = g.replace(nodes=cooked)
    expected = {">=": T, "<=": T, "==": T, ">": F, "<": F}
    for op, want in expected.items():
        assert _eval({"attr": ["patty", "cooked", op, 1.0]}, g) is want, op
    assert _eval({"attr": ["patty", "state", "==", "grilled"]}, g) is T
    assert _eval({"attr": ["patty", "state", ">=", 1.0]}, g) is U  # text cannot be ordered


def test_switching_the_burner_on() -> None:
    g, *_ = run_plan(kitchen(), [act(Verb.TURN_ON, "burner")])
    assert _eval({"on_state": ["burner", True]}, g) is T


# -- burger stack, order independence, removal ---------------------------------------------


def test_burger_in_the_right_order_is_true() -> None:
    plan = pick_place("bun", "plate") + pick_place("patty", "bun") + pick_place("cheese", "patty")
    g, verdicts, *_ = run_plan(kitchen(), plan)
    assert all(v.accepted for v in verdicts)
    assert _eval(BURGER, g) is T


def test_burger_in_the_wrong_order_is_false() -> None:
    plan = pick_place("patty", "plate") + pick_place("bun", "patty") + pick_place("cheese", "bun")
    g, verdicts, *_ = run_plan(kitchen(), plan)
    assert all(v.accepted for v in verdicts)
    assert _eval(BURGER, g) is F
    assert _eval({"stack": ["plate", "patty", "bun", "cheese"]}, g) is T


def test_two_valid_orders_reach_the_same_graph_and_the_same_truth() -> None:
    open_ = [act(Verb.OPEN, "drawer")]
    mug = pick_place("mug_red", "drawer", "in")
    bun = pick_place("bun", "plate")
    first, *_ = run_plan(kitchen(), open_ + mug + bun)
    second, *_ = run_plan(kitchen(), bun + open_ + mug)
    assert first.semantic_digest() == second.semantic_digest()
    goal = {"all": [{"in": ["mug_red", "drawer"]}, {"on": ["bun", "plate"]}, {"open": "drawer"}]}
    assert _eval(goal, first) is T
    assert _eval(goal, second) is T


@pytest.mark.parametrize(
    "pred",
    [
        {"on": ["bun", "plate"]},
        {"held": "bun"},
        {"near": ["bun", "plate", 0.5]},
        BURGER,
        {"not": {"on": ["bun", "plate"]}},
        {"attr": ["bun", "cooked", ">=", 1.0]},
    ],
)
def test_removed_object_makes_it_unknown_and_not_satisfied(pred: dict[str, Any]) -> None:
    value = _eval(pred, without(kitchen(), "bun"))
    assert value is U
    assert not satisfied(value)


def test_no_graph_is_unknown() -> None:
    assert On("bun", "table").evaluate(None) is U


# -- accepted events -----------------------------------------------------------------------


def test_accepted_event_matches_verb_object_and_target() -> None:
    _, _, events, _ = run_plan(
        kitchen(), [act(Verb.TURN_ON, "burner"), *pick_place("bun", "plate")]
    )
    assert _eval({"accepted": {"verb": "turn_on", "obj": "burner"}}, events=events) is T
    assert (
        _eval({"accepted": {"verb": "place", "obj": "bun", "target": "plate"}}, events=events) is T
    )
    assert _eval({"accepted": {"verb": "place", "obj": "bun"}}, events=events) is T
    assert (
        _eval({"accepted": {"verb": "place", "obj": "bun", "target": "drawer"}}, events=events) is F
    )
    assert _eval({"accepted": {"verb": "turn_off", "obj": "burner"}}, events=events) is F
    assert _eval({"accepted": {"verb": "turn_on", "obj": "burner"}}, events=[]) is F
    assert _eval({"accepted": {"verb": "turn_on", "obj": "burner"}}, events=None) is U


def test_rejected_actions_are_not_events() -> None:
    _, verdicts, events, _ = run_plan(kitchen(), [act(Verb.PLACE, "bun", "plate")])
    assert not verdicts[0].accepted and events == []
    with pytest.raises(ValueError, match="rejected"):
        Event.from_verdict(verdicts[0])


# -- describe and round trip ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("pred", "text"),
    [
        (BURGER, "bun, patty, cheese stacked on plate, in that order"),
        ({"on": ["bun", "plate"]}, "bun on plate"),
        ({"in": ["mug_red", "drawer"]}, "mug_red in drawer"),
        ({"closed": "drawer"}, "drawer closed"),
        ({"on_state": ["burner", True]}, "burner switched on"),
        ({"near": ["bun", "plate", 0.05]}, "bun within 0.05 m of plate"),
        ({"accepted": {"verb": "turn_on", "obj": "burner"}}, "accepted turn_on burner"),
        ({"not": {"held": "bun"}}, "not (bun held)"),
        ({"any": [{"held": "bun"}, {"open": "drawer"}]}, "any of: bun held; drawer open"),
    ],
)
def test_describe(pred: dict[str, Any], text: str) -> None:
    assert parse_predicate(pred).describe() == text


@pytest.mark.parametrize(
    "pred",
    [
        BURGER,
        {"attr": ["patty", "cooked", ">=", 1.0]},
        {"on_state": ["burner", True]},
        {"accepted": {"verb": "place", "obj": "bun", "target": "plate"}},
        {
            "all": [
                {"not": {"open": "drawer"}},
                {"any": [{"held": "bun"}, {"in": ["bun", "drawer"]}]},
            ]
        },
        {"near": ["bun", "plate", 0.05]},
    ],
)
def test_json_round_trip(pred: dict[str, Any]) -> None:
    parsed = parse_predicate(pred)
    assert parsed.to_json() == pred
    assert parse_predicate(parsed.to_json()) == parsed


def test_constructed_values_compare_equal_to_parsed_ones() -> None:
    assert parse_predicate(BURGER) == Stack("plate", ("bun", "patty", "cheese"))
    assert parse_predicate({"not": {"on": ["a", "b"]}}) == Not(On("a", "b"))


# -- parse errors name the field path ------------------------------------------------------


P = "goal.predicates[2]"
PLACE_PLAT = {"verb": "place", "obj": "bun", "target": "plat"}


@pytest.mark.parametrize(
    ("pred", "message"),
    [
        ({"ontop": ["bun", "plate"]}, ": unknown predicate 'ontop' (known: on, in, held, open,"),
        ({"on": ["bun", "plat"]}, ".on[1]: unknown object 'plat' — did you mean 'plate'?"),
        ({"on": "bun"}, ".on: expected [object, support], got 'bun'"),
        ({"on": ["bun"], "in": []}, ": expected an object with exactly one key"),
        ({"stack": ["plate"]}, ".stack: expected [base, first, second, …]"),
        ({"stack": ["plate", "bun", "bun"]}, ".stack: bun appears more than once"),
        ({"stack": ["plate", "bun", "chese"]}, ".stack[2]: unknown object 'chese'"),
        ({"attr": ["patty", "cooked", "=>", 1]}, ".attr[2]: unknown comparison '=>'"),
        ({"attr": ["patty", "cooked", ">=", "done"]}, ".attr[3]: expected a number"),
        ({"on_state": ["burner", "yes"]}, ".on_state[1]: expected true or false"),
        ({"near": ["bun", "plate", 0]}, ".near[2]: distance must be positive"),
        ({"accepted": {"verb": "fry", "obj": "patty"}}, ".accepted.verb: expected one of"),
        ({"accepted": {"verb": "pick", "obj": "bun", "by": 1}}, ".accepted: unknown field(s) by"),
        ({"accepted": PLACE_PLAT}, ".accepted.target: unknown object 'plat'"),
        ({"not": {"helt": "bun"}}, ".not: unknown predicate 'helt'"),
        ({"all": [{"held": "bun"}, {"on": ["bun", 3]}]}, ".all[1].on[1]: expected an object id"),
        ({"any": []}, ".any: expected a non-empty list of predicates"),
        ("on bun plate", ": expected an object with exactly one key"),
    ],
)
def test_parse_errors_name_the_field_path(pred: Any, message: str) -> None:
    with pytest.raises(ContractError) as err:
        parse_predicate(pred, where=P, known_ids=IDS)
    assert str(err.value).startswith(P + message), str(err.value)


def test_ids_are_only_checked_when_known_ids_are_given() -> None:
    assert parse_predicate({"on": ["ghost", "plate"]}).ids() == {"ghost", "plate"}
