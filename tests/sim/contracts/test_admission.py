"""Contract admission: frozen only when it separates the reference from the near-misses."""

from __future__ import annotations

from typing import Any

from sim.contracts import Contract, admit
from sim.world import SceneGraph, Verb, check
from tests.sim.contracts.scenes import act, kitchen, pick_place, run_plan

GOAL: dict[str, Any] = {
    "kind": "terminal_state",
    "predicates": [{"in": ["mug_red", "drawer"]}, {"closed": "drawer"}, {"on": ["bun", "plate"]}],
}
OPEN = [act(Verb.OPEN, "drawer")]
CLOSE = [act(Verb.CLOSE, "drawer")]
MUG = pick_place("mug_red", "drawer", "in")
BUN = pick_place("bun", "plate")
CHEESE = pick_place("cheese", "drawer", "in")  # the wrong object in the drawer


def _final(plan: list[Any]) -> SceneGraph:
    return run_plan(kitchen(), plan)[0]


def _rejection_keeps_the_graph() -> bool:
    g = kitchen()
    verdict = check(g, act(Verb.PLACE, "bun", "plate"))  # not holding it
    return not verdict.accepted and check(g, verdict.action) == verdict and g == kitchen()


def _replay_hashes() -> list[str]:
    _, _, _, frames = run_plan(kitchen(), OPEN + MUG + CLOSE + BUN)
    return [g.semantic_digest() for _, g in frames]


def _admit(contract: Contract, **overrides: Any) -> Any:
    args: dict[str, Any] = {
        "initial": (kitchen(), []),
        "reference": (_final(OPEN + MUG + CLOSE + BUN), []),
        "negatives": {
            "partial": (_final(OPEN + MUG + CLOSE), []),
            "wrong_binding": (
                _final(OPEN + pick_place("cheese", "drawer", "in") + CLOSE + BUN),
                [],
            ),
            "missing_state": (_final(OPEN + MUG + BUN), []),  # drawer left open
        },
        "replay_hashes": (_replay_hashes(), _replay_hashes()),
        "immutability": _rejection_keeps_the_graph(),
        "alternatives": {"bun_first": (_final(BUN + OPEN + MUG + CLOSE), [])},
    }
    return admit(contract, **{**args, **overrides})


def test_a_good_contract_is_admitted_with_every_check_listed() -> None:
    report = _admit(Contract.from_json(GOAL))
    assert report.admitted, report.describe()
    assert [c.name for c in report.checks] == [
        "reference_passes",
        "initial_fails",
        "negative:missing_state",
        "negative:partial",
        "negative:wrong_binding",
        "alternative:bun_first",
        "repeated_replay",
        "invalid_action_immutability",
    ]


def test_a_contract_the_partial_run_satisfies_is_refused() -> None:
    weak = Contract.from_json({**GOAL, "predicates": GOAL["predicates"][:2]})
    report = _admit(weak)
    assert not report.admitted
    failed = [c.name for c in report.checks if not c.passed]
    assert failed == ["negative:partial"]
    assert "satisfied but must not be" in report.checks[3].reason


def test_a_contract_the_initial_state_satisfies_is_refused() -> None:
    trivial = Contract.from_json({"kind": "terminal_state", "predicates": [{"closed": "drawer"}]})
    report = _admit(trivial)
    assert not report.checks[1].passed and report.checks[1].name == "initial_fails"
    assert not report.admitted


def test_reference_that_fails_is_reported_with_the_unmet_conditions() -> None:
    report = _admit(Contract.from_json(GOAL), reference=(_final(OPEN + MUG + CLOSE), []))
    assert not report.checks[0].passed
    assert report.checks[0].reason == "contract not satisfied: [2] bun on plate = F"


def test_checks_not_run_do_not_pass() -> None:
    report = _admit(Contract.from_json(GOAL), replay_hashes=None, immutability=None, negatives={})
    reasons = {c.name: (c.passed, c.reason) for c in report.checks}
    assert reasons["repeated_replay"] == (False, "not run")
    assert reasons["invalid_action_immutability"] == (False, "not run")
    assert reasons["negative_suites"] == (False, "no negative suite given")
    assert not report.admitted


def test_diverging_replay_and_mutating_rejection_fail() -> None:
    first = _replay_hashes()
    second = [*first[:3], "different", *first[4:]]
    report = _admit(Contract.from_json(GOAL), replay_hashes=(first, second), immutability=False)
    reasons = {c.name: (c.passed, c.reason) for c in report.checks}
    assert reasons["repeated_replay"][0] is False
    assert "diverge at step 3" in reasons["repeated_replay"][1]
    assert reasons["invalid_action_immutability"] == (False, "a rejected action changed the graph")


def test_event_contract_admission_uses_the_event_logs() -> None:
    contract = Contract.from_json(
        {
            "kind": "accepted_event",
            "predicates": [{"accepted": {"verb": "turn_on", "obj": "burner"}}],
        }
    )
    final, _, events, _ = run_plan(kitchen(), [act(Verb.TURN_ON, "burner")])
    _, _, wrong, _ = run_plan(kitchen(), [act(Verb.OPEN, "drawer")])
    report = _admit(
        contract,
        reference=(final, events),
        negatives={"wrong_binding": (final, wrong), "no_log": (final, None)},
        alternatives={},
    )
    assert report.admitted, report.describe()
