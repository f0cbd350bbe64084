"""Batch manifests (``workbench-batch/1``): scenarios × personas × assistants × timings × runs.

A manifest is a JSON or TOML file::

    {"format": "workbench-batch/1", "name": "pilot", "mode": "symbolic",
     "scenarios": ["cook-patty", "cheeseburger"],
     "personas": ["novice", "expert", {"name": "slow-truster", "trust": "high", ...}],
     "assistants": ["oracle", {"name": "gpt-small", "kind": "llm", "options": {"profile": "p"}}],
     "agents": [{"name": "policy", "kind": "external", "options": {"argv": ["python", "p.py"]}}],
     "user": "rule", "timing": ["fixed"], "runs": 5, "seed": 0}

``assistants`` work with the simulated ``user`` (IVG); ``agents`` act on the world themselves
(W2W / Ego2World: ``scripted``, ``llm`` with a ``profile``, ``external`` with an ``argv``), one
cell per scenario × agent, with persona and timing ``-``.

Every name is checked before anything is queued (scenario files, persona fields, participant
kinds, the scenario's event schedule), and an error names the manifest file and the field, so a
typo never leaves half a batch behind. Cells are the product in the order scenario, persona,
assistant, timing; run ``r`` of every cell uses seed ``seed + r`` (the scenario's own seed when
the manifest gives none), so the runs of a cell differ and the same run is the same world for
every assistant.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from itertools import product
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from annotation import UserError
from sim.episode import AgentFactory, open_scenario
from sim.interact import ASSISTANTS, USERS
from sim.users import PROFILES, Persona, PersonaError, parse_persona
from storage import BatchCellRecord

FORMAT = "workbench-batch/1"

#: agents a batch can run (acting on the world themselves, no user): kind -> maker of the
#: episode's agent factory from ``(profiles, options)``, ``profiles`` being the stored configs
#: of the model profiles the options name (the maker runs where the episode runs, which may
#: not be where the project is); None means the engine's own agent by that name. ``judge``
#: adds ``llm`` when imported; ``external`` is your own process.
AgentMaker = Callable[[Mapping[str, Mapping[str, Any]], Mapping[str, Any]], AgentFactory | None]
AGENT_KINDS: dict[str, AgentMaker] = {}
MAX_EPISODES = 100_000


class ManifestError(UserError, ValueError):
    """A manifest that cannot be planned; the message names the file and the field."""


class Participant(BaseModel):
    """An assistant (or the user) of a batch: a registered kind with its options, and the
    label results tables show (``name``; several labels may share a kind)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)


class Manifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["workbench-batch/1"]
    name: str = Field(min_length=1)
    mode: Literal["symbolic", "physics"] = "symbolic"
    #: physics: a shipped arm or one of the project's arm profiles (``NAME``, ``NAME@N``) for
    #: every episode; None: each scenario's own ``arm``, else the default
    arm: str | None = Field(default=None, min_length=1)
    scenarios: list[str] = Field(min_length=1)
    personas: list[Persona] = Field(min_length=1)
    assistants: list[Participant] = Field(default_factory=list)
    agents: list[Participant] = Field(default_factory=list)
    user: Participant = Participant(name="rule", kind="rule")
    timing: list[Literal["fixed", "measured"]] = Field(default=["fixed"], min_length=1)
    runs: int = Field(default=1, ge=1, le=1000)
    seed: int | None = None

    @field_validator("personas", mode="before")
    @classmethod
    def _personas(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        out: list[Any] = []
        for k, p in enumerate(value):
            if isinstance(p, str):
                if p not in PROFILES:
                    raise ValueError(
                        f"[{k}]: no persona {p!r}; named personas: {', '.join(PROFILES)}"
                    )
                out.append(PROFILES[p])
            elif isinstance(p, Mapping):
                try:
                    out.append(parse_persona(p, where=f"[{k}]"))
                except PersonaError as err:
                    raise ValueError(str(err)) from None
            else:
                out.append(p)
        return out

    @field_validator("assistants", "agents", mode="before")
    @classmethod
    def _assistants(cls, value: Any) -> Any:
        return [_participant(a) for a in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _someone_under_test(self) -> Manifest:
        if not self.assistants and not self.agents:
            raise ValueError(
                "assistants: a batch needs at least one assistant (with a simulated user) or "
                "agent (acting on its own) under test"
            )
        return self

    @field_validator("user", mode="before")
    @classmethod
    def _user(cls, value: Any) -> Any:
        return _participant(value)

    def persona(self, name: str) -> Persona:
        return next(p for p in self.personas if p.name == name)

    def assistant(self, name: str) -> Participant:
        return next(a for a in self.assistants if a.name == name)

    def agent(self, name: str) -> Participant | None:
        """The agent labelled ``name``, or None when the label is an assistant's."""
        return next((a for a in self.agents if a.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _participant(value: Any) -> Any:
    """A bare name means that kind with no options, labelled by its kind."""
    return {"name": value, "kind": value} if isinstance(value, str) else value


def parse_manifest(
    data: Any, *, source: str = "<manifest>", check_scenarios: bool = True
) -> Manifest:
    """A checked manifest (see the module docstring); errors name ``source`` and the field.

    ``check_scenarios`` opens every scenario and its schedule (a world each): what queueing
    does; a job reading back the plan it was queued from skips it."""
    if not isinstance(data, Mapping):
        raise ManifestError(f"{source}: expected an object with format {FORMAT!r}")
    if data.get("format") != FORMAT:
        raise ManifestError(f"{source}: format: expected {FORMAT!r}, got {data.get('format')!r}")
    try:
        m = Manifest.model_validate(dict(data))
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(manifest)"
        msg = str(err["msg"]).replace("Value error, ", "")
        raise ManifestError(f"{source}: {where}: {msg}") from None
    _check_names(m, source)
    _check_kinds(m, source)
    if check_scenarios:
        _check_scenarios(m, source)
    return m


def _check_names(m: Manifest, source: str) -> None:
    for field, names in (
        ("scenarios", m.scenarios),
        ("personas", [p.name for p in m.personas]),
        ("assistants", [a.name for a in m.assistants]),
        ("agents", [a.name for a in m.agents]),
        ("timing", list(m.timing)),
    ):
        seen: set[str] = set()
        for k, n in enumerate(names):
            if n in seen:
                raise ManifestError(
                    f"{source}: {field}[{k}]: {n!r} appears twice; give each entry its own name"
                )
            seen.add(n)
    clash = {a.name for a in m.assistants} & {a.name for a in m.agents}
    if clash:
        raise ManifestError(
            f"{source}: agents: {sorted(clash)[0]!r} also names an assistant; labels must differ"
        )
    grid = len(m.personas) * len(m.assistants) * len(m.timing) + len(m.agents)
    total = len(m.scenarios) * grid * m.runs
    if total > MAX_EPISODES:
        raise ManifestError(f"{source}: plans {total} episodes; at most {MAX_EPISODES} per batch")


def _check_kinds(m: Manifest, source: str) -> None:
    """Participant and agent kinds: registered ones only."""
    for k, a in enumerate(m.assistants):
        if a.kind not in ASSISTANTS:
            raise ManifestError(
                f"{source}: assistants[{k}].kind: no assistant {a.kind!r} (known: "
                f"{', '.join(sorted(ASSISTANTS))})"
            )
    for k, a in enumerate(m.agents):
        if a.kind not in AGENT_KINDS:
            raise ManifestError(
                f"{source}: agents[{k}].kind: no agent {a.kind!r} (known: "
                f"{', '.join(sorted(AGENT_KINDS))})"
            )
    if m.user.kind not in USERS:
        raise ManifestError(
            f"{source}: user.kind: no simulated user {m.user.kind!r} (known: "
            f"{', '.join(sorted(USERS))})"
        )


def _check_scenarios(m: Manifest, source: str) -> None:
    """Scenario files and their event schedules, before anything is queued."""
    from sim.episode import make_world
    from sim.interact import default_schedule, known_ids

    for k, name in enumerate(m.scenarios):
        try:
            bound = open_scenario(name)
            world = make_world(bound, "symbolic")
            try:  # the objects this layout places: what the schedule may name
                default_schedule(bound, known_ids(world, bound.scenario.seed))
            finally:
                world.close()
        except UserError as err:
            raise ManifestError(f"{source}: scenarios[{k}] ({name}): {err}") from None


def load_manifest(path: Path) -> Manifest:
    """Read a ``.json`` or ``.toml`` manifest file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ManifestError(f"{path}: cannot read the manifest: {err.strerror}") from None
    try:
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except json.JSONDecodeError as err:
        raise ManifestError(f"{path}: line {err.lineno}: not JSON: {err.msg}") from None
    except tomllib.TOMLDecodeError as err:
        raise ManifestError(f"{path}: not TOML: {err}") from None
    return parse_manifest(data, source=str(path))


NO_USER = "-"  # the persona and timing of an agent's cell: nobody talks, nothing is late


def plan_cells(m: Manifest) -> list[BatchCellRecord]:
    """One planned episode per run of each cell (see the module docstring for the order);
    agents' cells follow the assistants', one per scenario × agent."""
    cells = []
    grid: list[tuple[str, str, str, str]] = [
        (s, p.name, a.name, t)
        for s, p, a, t in product(m.scenarios, m.personas, m.assistants, m.timing)
    ]
    grid += [(s, NO_USER, a.name, NO_USER) for s, a in product(m.scenarios, m.agents)]
    for cell, (scenario, persona, assistant, timing) in enumerate(grid):
        base = m.seed if m.seed is not None else open_scenario(scenario).scenario.seed
        for run in range(m.runs):
            cells.append(
                BatchCellRecord(
                    cell=cell, run=run, scenario=scenario, persona=persona,
                    assistant=assistant, timing=timing, seed=base + run,
                )
            )  # fmt: skip
    return cells


def _scripted(
    _profiles: Mapping[str, Mapping[str, Any]], _options: Mapping[str, Any]
) -> AgentFactory | None:
    return None


def _external(
    _profiles: Mapping[str, Mapping[str, Any]], options: Mapping[str, Any]
) -> AgentFactory | None:
    from sim.external import external_factory

    argv = options.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ManifestError("agent option argv: expected the command as a list of strings")
    timeout = options.get("timeout_s", 30.0)
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise ManifestError("agent option timeout_s: expected seconds > 0")
    cwd = options.get("cwd")
    return external_factory(argv, cwd=None if cwd is None else Path(str(cwd)),
                            timeout=float(timeout))  # fmt: skip


AGENT_KINDS["scripted"] = _scripted
AGENT_KINDS["external"] = _external
