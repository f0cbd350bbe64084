"""Who can play the user and the assistant: a registry of named factories.

``sim`` ships the offline ones (the rule-based user, the oracle assistant, and replays of
recorded turns); model-backed ones (``llm``) are registered by ``judge`` when it is imported,
so ``sim`` itself never calls a model. A batch or a CLI names a participant; the worker that
runs it has imported the modules that register it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation import UserError
from sim.interact._human import HumanUser
from sim.interact._oracle import OracleAssistant
from sim.interact._rule_user import RuleUser
from sim.interact._types import Assistant, SimUser
from sim.scenario import BoundScenario
from sim.users import Persona


class ParticipantError(UserError, LookupError):
    """A user or assistant kind nobody registered, options it cannot use, or a participant
    that cannot go on (its model failed for good).

    ``retryable``: running the episode again later may succeed (the endpoint timed out,
    refused the connection, answered 5xx or rate-limited us); ``kind`` names the failure
    (``rate_limit``, ``server``, ``bad_request`` …; "" when it is not a model's). A batch reads
    both to decide between the queue's retry and failing at once.
    """

    retryable: bool = False
    kind: str = ""


@dataclass(frozen=True)
class Setup:
    """What a participant factory is given. ``profiles``: model profiles' stored configs by
    name, sent with the episode (a batch job that runs where the project is not); a model-backed
    participant takes its ``profile`` from there before it looks in ``project_root``."""

    bound: BoundScenario
    persona: Persona
    seed: int
    options: Mapping[str, Any] = field(default_factory=dict)
    project_root: Path | None = None
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


UserFactory = Callable[[Setup], SimUser]
AssistantFactory = Callable[[Setup], Assistant]
USERS: dict[str, UserFactory] = {}
ASSISTANTS: dict[str, AssistantFactory] = {}


def register_user(name: str, factory: UserFactory) -> None:
    USERS[name] = factory


def register_assistant(name: str, factory: AssistantFactory) -> None:
    ASSISTANTS[name] = factory


def _factory(registry: dict[str, Any], role: str, name: str) -> Any:
    try:
        return registry[name]
    except KeyError:
        raise ParticipantError(
            f"no {role} {name!r} (known: {', '.join(sorted(registry))}; model-backed ones need "
            "the judge package loaded)"
        ) from None


def make_user(name: str, setup: Setup) -> SimUser:
    factory: UserFactory = _factory(USERS, "simulated user", name)
    return factory(setup)


def make_assistant(name: str, setup: Setup) -> Assistant:
    factory: AssistantFactory = _factory(ASSISTANTS, "assistant", name)
    return factory(setup)


def _oracle(setup: Setup) -> Assistant:
    try:
        latency = float(setup.options.get("latency_s", 0.0))
    except (TypeError, ValueError):
        raise ParticipantError("assistant option latency_s: expected seconds") from None
    return OracleAssistant(latency_s=latency)


register_user("rule", lambda s: RuleUser(s.bound.reference, s.persona, seed=s.seed))
register_assistant("oracle", _oracle)
register_user("human", lambda _setup: HumanUser())
