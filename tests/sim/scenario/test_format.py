"""Scenario files: every mistake is named by file and field, before anything runs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sim.scenario import ScenarioError, bind, parse_scenario
from sim.world import SceneInfo


def _doc(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": "workbench-scenario/1",
        "name": "t",
        "title": "T",
        "family": "stack",
        "instruction": "Put the red brick on the blue brick.",
        "layout": {
            "objects": [
                {"id": "brick_red", "region": [-0.2, 0.2, -0.3, 0.3]},
                {"id": "brick_blue", "region": [-0.2, 0.2, -0.3, 0.3]},
            ]
        },
        "goal": {"kind": "terminal_state", "predicates": [{"on": ["brick_red", "brick_blue"]}]},
        "reference": ["pick up the red brick", "put the red brick on the blue brick"],
    }
    doc.update(over)
    return doc


def _bind(doc: dict[str, Any], info: SceneInfo) -> Any:
    return bind(parse_scenario(json.dumps(doc), source="s.json"), info, source="s.json")


def test_a_good_scenario_binds(info: SceneInfo) -> None:
    bound = _bind(_doc(), info)
    assert [s.action.verb.value for s in bound.reference if s.action] == ["pick", "place"]
    assert bound.contract.kind == "terminal_state"


def test_malformed_json_names_the_line() -> None:
    with pytest.raises(ScenarioError, match=r"s\.json: line 3 column"):
        parse_scenario('{\n "name": "x",\n oops\n}', source="s.json")


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"colour": "red"}, r"s\.json: colour: unknown field"),
        ({"family": "garage"}, r"s\.json: family: "),
        ({"delta": -1}, r"s\.json: delta: "),
        ({"delta": 0.015}, r"s\.json: delta: .*multiple of 0\.01"),
        ({"name": "Bad Name"}, r"s\.json: name: "),
        ({"budgets": {"max_tick": 3}}, r"s\.json: budgets\.max_tick: unknown field"),
        ({"layout": {"objects": [{"id": "brick_red", "region": [0.2, -0.2, 0, 0.1]}]}},
         r"layout\.objects\[0\]\.region"),
        ({"anomalies": [{"kind": "explode", "obj": "brick_red", "at_tick": 3}]},
         r"anomalies\[0\]\.kind"),
        ({"format": "workbench-scenario/9"}, r"newer workbench"),
        ({"reference": ["pick up the red brick", {"wait_untl": {}}]},
         r"s\.json: reference\[1\]\.wait_until: required field is missing"),
        ({"reference": [5]}, r"s\.json: reference\[0\]: "),
    ],
)  # fmt: skip
def test_structure_errors_name_the_field(over: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(json.dumps(_doc(**over)), source="s.json")


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"layout": {"objects": [{"id": "brick_pink"}]}},
         r"layout\.objects\[0\]\.id: unknown object 'brick_pink'"),
        ({"layout": {"objects": [{"id": "brick_red", "on": "brick_blue"}]}},
         r"layout\.objects\[0\]\.on: 'brick_blue' is not placed before"),
        ({"goal": {"kind": "terminal_state", "predicates": [{"ontop": ["brick_red", "x"]}]}},
         r"goal\.predicates\[0\].*unknown predicate 'ontop'"),
        ({"goal": {"kind": "terminal_state", "predicates": [{"on": ["brick_red", "mug_red"]}]}},
         r"goal\.predicates\[0\].*mug_red"),
        ({"reference": ["fly the red brick"]}, r"reference\[0\]: not a command"),
        ({"anomalies": [{"kind": "remove", "obj": "brick_red"}]},
         r"anomalies\[0\]: give exactly one of at_tick or when"),
        ({"anomalies": [{"kind": "remove", "obj": "mug_red", "at_tick": 2}]},
         r"anomalies\[0\]\.obj: 'mug_red' is not in the layout"),
        ({"anomalies": [{"kind": "remove", "obj": "drawer", "at_tick": 2}]},
         r"anomalies\[0\]\.obj: 'drawer' is fixed furniture"),
    ],
)  # fmt: skip
def test_binding_errors_name_the_field(
    info: SceneInfo,
    over: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(ScenarioError, match=message):
        _bind(_doc(**over), info)
