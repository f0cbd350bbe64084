"""Frozen contracts: JSON form, digest, evaluation with witnesses, and 'accepted ≠ achieved'."""

from __future__ import annotations

from typing import Any

import pytest

from sim.contracts import (
    Contract,
    ContractError,
    Held,
    On,
    TaskRun,
    Truth,
    endpoint,
    evaluate,
    gcr,
    operational_tsr,
    task_validity,
    witness_tick,
)
from sim.world import Verb
from tests.sim.contracts.scenes import act, kitchen, pick_place, run_plan, without

T, F, U = Truth.T, Truth.F, Truth.U
IDS = set(kitchen().nodes)

BURGER_CONTRACT: dict[str, Any] = {
    "kind": "terminal_state",
    "predicates": [
        {"stack": ["plate", "bun", "patty", "cheese"]},
        {"near": ["patty", "plate", 0.05]},
        {"near": ["cheese", "plate", 0.05]},
        {"not": {"any": [{"held": "bun"}, {"held": "patty"}, {"held": "cheese"}]}},
    ],
}


def test_round_trip_and_digest() -> None:
    c = Contract.from_json(BURGER_CONTRACT, where="goal", known_ids=IDS)
    assert c.to_json() == BURGER_CONTRACT
    assert Contract.from_json(c.to_json()) == c
    assert len(c.digest) == 64
    assert c.digest == Contract.from_json(dict(reversed(list(BURGER_CONTRACT.items())))).digest
    other = {**BURGER_CONTRACT, "predicates": BURGER_CONTRACT["predicates"][:3]}
    assert Contract.from_json(other).digest != c.digest


def test_weights_and_required_are_part_of_the_identity() -> None:
    base = Contract.from_json(BURGER_CONTRACT)
    gated = Contract.from_json({**BURGER_CONTRACT, "required": [3, 0]})
    assert gated.required == (0, 3)
    assert gated.digest != base.digest
    assert gated.to_json()["required"] == [0, 3]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "final"}, "goal.kind: expected one of terminal_state, accepted_event"),
        ({"predicates": []}, "goal.predicates: expected a non-empty list"),
        ({"weights": [1, 2]}, "goal: weights: 2 weights for 4 predicates"),
        ({"weights": [1, -1, 1, 1]}, "goal: weights: must be non-negative"),
        ({"required": [4]}, "goal: required: index 4 out of range (0–3)"),
        ({"required": [1, 1]}, "goal: required: repeated index"),
        ({"required": ["0"]}, "goal.required: expected a list of predicate indices"),
        ({"extra": 1}, "goal: unknown field(s) extra"),
        (
            {"predicates": [{"held": "bun"}, {"accepted": {"verb": "pick", "obj": "bun"}}]},
            "goal.predicates[1]: a terminal_state contract reads only the final state",
        ),
        (
            {"kind": "accepted_event"},
            "goal.kind: accepted_event contract without an 'accepted' predicate",
        ),
        ({"predicates": [{"held": "bn"}]}, "goal.predicates[0].held: unknown object 'bn'"),
    ],
)
def test_contract_errors_name_the_field(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ContractError) as err:
        Contract.from_json({**BURGER_CONTRACT, **change}, where="goal", known_ids=IDS)
    assert str(err.value).startswith(message), str(err.value)


def test_direct_construction_is_validated() -> None:
    with pytest.raises(ContractError, match="contract: needs at least one predicate"):
        Contract("terminal_state", ())
    with pytest.raises(ContractError, match="without an 'accepted' predicate"):
        Contract("accepted_event", (Held("bun"),))


def test_every_action_accepted_yet_the_goal_unmet() -> None:
    """The headline of Ego2World: acceptance and completion do not establish the goal."""
    contract = Contract.from_json(BURGER_CONTRACT, known_ids=IDS)
    plan = pick_place("patty", "plate") + pick_place("bun", "patty") + pick_place("cheese", "bun")
    final, verdicts, events, frames = run_plan(kitchen(), plan)
    assert all(v.accepted for v in verdicts)
    result = evaluate(contract, final, events, frames=frames)
    assert result.values == (F, T, T, T)
    assert not result.satisfied
    run = TaskRun(
        "burger", "terminal_state", "completed", result.values,
        accepted_attempts=len(events), attempts=len(verdicts),
    )  # fmt: skip
    assert task_validity([run]) == 1.0
    assert gcr([run]) == 0.75
    assert operational_tsr([run]) == 0.0
    assert endpoint(run) == "completed_partial"


def test_witness_is_the_tick_that_made_each_condition_true() -> None:
    contract = Contract.from_json(BURGER_CONTRACT)
    plan = pick_place("bun", "plate") + pick_place("patty", "bun") + pick_place("cheese", "patty")
    final, _, events, frames = run_plan(kitchen(), plan)
    result = evaluate(contract, final, events, frames=frames)
    assert result.satisfied
    # ticks: 1 pick bun, 2 place bun, 3 pick patty, 4 place patty, 5 pick cheese, 6 place cheese
    assert [c.witness_tick for c in result.conditions] == [6, 4, 6, 6]
    assert result.conditions[0].predicate_text == (
        "bun, patty, cheese stacked on plate, in that order"
    )


def test_event_contract_witness_without_frames_is_the_first_matching_event() -> None:
    contract = Contract.from_json(
        {"kind": "accepted_event", "predicates": [{"accepted": {"verb": "place", "obj": "bun"}}]}
    )
    final, _, events, _ = run_plan(kitchen(), pick_place("bun", "plate"))
    result = evaluate(contract, final, events)
    assert result.satisfied and result.conditions[0].witness_tick == 2
    assert evaluate(contract, final, None).values == (U,)
    assert not evaluate(contract, final, None).satisfied
    assert evaluate(contract, final, []).values == (F,)


@pytest.mark.parametrize(
    ("series", "expected"),
    [
        ([(0, F), (1, T), (2, T)], 1),
        ([(0, T), (1, T)], 0),
        ([(0, F), (1, T), (2, F), (3, U), (4, T), (5, T)], 4),  # undone, then re-achieved
        ([(0, T), (1, F)], None),
        ([(0, F), (1, U)], None),
        ([], None),
    ],
)
def test_witness_tick_is_where_the_value_last_became_true(
    series: list[tuple[int, Truth]], expected: int | None
) -> None:
    assert witness_tick(series) == expected


def test_unknown_fails_the_binary_contract_and_counts_zero() -> None:
    contract = Contract("terminal_state", (On("bun", "plate"), Held("cheese")), required=(0,))
    final, *_ = run_plan(kitchen(), [*pick_place("bun", "plate"), act(Verb.PICK, "cheese")])
    assert evaluate(contract, final, []).satisfied
    gone = evaluate(contract, without(final, "bun"), [])
    assert gone.values == (U, T)
    assert not gone.satisfied
    assert gone.fraction == 0.5


def test_weighted_score_renormalises_over_the_weights() -> None:
    contract = Contract("terminal_state", (On("bun", "plate"), Held("cheese")), weights=(3, 1))
    final, *_ = run_plan(kitchen(), pick_place("bun", "plate"))
    result = evaluate(contract, final, [])
    assert result.values == (T, F)
    assert result.score == 0.75
    assert result.fraction == 0.5
