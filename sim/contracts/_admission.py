"""Contract admission: the evaluator self-tests a contract must pass before it is frozen.

Ego2World admits a task only when its contract tells the reference solution apart from the
things that must not pass (spec B.2 step 5, B.9, C.4.2): the reference passes, the initial state
fails (a contract the start already satisfies measures nothing), every negative suite (partial
execution, wrong binding, missing state) fails, repeated replay is identical, and a rejected
action left the graph unchanged. Alternative orders of independent operations, when given,
must pass like the reference.

This module is pure: the states and hashes come from running worlds elsewhere. A check that
was not run (``None``) does not pass — admission never assumes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sim.contracts._contract import Contract, ContractResult, evaluate
from sim.contracts._truth import Event
from sim.world import SceneGraph

#: (final graph, accepted events) of one run; either may be None when unavailable.
State = tuple[SceneGraph | None, Sequence[Event] | None]


@dataclass(frozen=True)
class AdmissionCheck:
    name: str
    passed: bool
    reason: str


@dataclass(frozen=True)
class AdmissionReport:
    digest: str
    checks: tuple[AdmissionCheck, ...]

    @property
    def admitted(self) -> bool:
        return all(c.passed for c in self.checks)

    def describe(self) -> list[str]:
        return [f"{'pass' if c.passed else 'FAIL'} {c.name}: {c.reason}" for c in self.checks]


def _run(contract: Contract, state: State) -> ContractResult:
    return evaluate(contract, state[0], state[1])


def _unmet(result: ContractResult) -> str:
    bad = [
        f"[{c.index}] {c.predicate_text} = {c.value.value}"
        for c in result.conditions
        if c.index in result.required and c.value.value != "T"
    ]
    return "; ".join(bad)


def _must_pass(name: str, contract: Contract, state: State) -> AdmissionCheck:
    result = _run(contract, state)
    if result.satisfied:
        return AdmissionCheck(name, True, "contract satisfied")
    return AdmissionCheck(name, False, f"contract not satisfied: {_unmet(result)}")


def _must_fail(name: str, contract: Contract, state: State) -> AdmissionCheck:
    result = _run(contract, state)
    if result.satisfied:
        return AdmissionCheck(name, False, "contract satisfied but must not be")
    return AdmissionCheck(name, True, f"fails as expected: {_unmet(result)}")


def _replay(hashes: tuple[Sequence[str], Sequence[str]] | None) -> AdmissionCheck:
    name = "repeated_replay"
    if hashes is None:
        return AdmissionCheck(name, False, "not run")
    first, second = list(hashes[0]), list(hashes[1])
    if not first:
        return AdmissionCheck(name, False, "no state hashes recorded")
    if first == second:
        return AdmissionCheck(name, True, f"{len(first)} state hashes identical")
    at = next(
        (i for i, (x, y) in enumerate(zip(first, second, strict=False)) if x != y),
        min(len(first), len(second)),
    )
    return AdmissionCheck(
        name, False, f"replays diverge at step {at} ({len(first)} vs {len(second)} hashes)"
    )


def _immutability(ok: bool | None) -> AdmissionCheck:
    name = "invalid_action_immutability"
    if ok is None:
        return AdmissionCheck(name, False, "not run")
    if ok:
        return AdmissionCheck(name, True, "rejected actions left the graph unchanged")
    return AdmissionCheck(name, False, "a rejected action changed the graph")


def admit(
    contract: Contract,
    *,
    initial: State,
    reference: State,
    negatives: Mapping[str, State],
    replay_hashes: tuple[Sequence[str], Sequence[str]] | None,
    immutability: bool | None,
    alternatives: Mapping[str, State] | None = None,
) -> AdmissionReport:
    """Run every admission check; the report lists each with pass/fail and a reason.

    At least one negative suite is required: a contract that was never shown to reject a
    near-miss is not admitted.
    """
    checks = [
        _must_pass("reference_passes", contract, reference),
        _must_fail("initial_fails", contract, initial),
    ]
    if not negatives:
        checks.append(AdmissionCheck("negative_suites", False, "no negative suite given"))
    checks += [_must_fail(f"negative:{k}", contract, negatives[k]) for k in sorted(negatives)]
    checks += [
        _must_pass(f"alternative:{k}", contract, (alternatives or {})[k])
        for k in sorted(alternatives or {})
    ]
    checks += [_replay(replay_hashes), _immutability(immutability)]
    return AdmissionReport(contract.digest, tuple(checks))
