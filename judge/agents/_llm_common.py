"""What the LLM assistant and the LLM simulated user share: options, prompts, one audited call.

Both participants make exactly one logical model call per turn through :class:`judge.OpenAIModel`
(one forced tool call, schema-checked by the client). :class:`AuditedModel` wraps the client:

- the client's recorder feeds it every request actually sent (a schema re-ask is a second
  request), which it turns into the *audit form*: the messages exactly as sent, with each image
  replaced by the sha256 of the frame it shows, the tools by their names and one schema digest;
- a reply that is still invalid after the repair re-ask comes back as ``None`` (the participant
  then stays silent), so a malformed reply never ends an episode;
- any other failure becomes :class:`ModelParticipantError`, a user error naming the profile,
  with ``retryable`` telling a batch whether running the episode again may succeed.

Each call writes into the view it was made for, whatever happens (a failure and Ctrl+C
included): the audit form of every request sent (``view.requests``) and the call's account
(``view.account``: tokens and cost summed over its requests, and its outcome — valid, repaired,
silenced or failed). The interactive loop stores both with the exchange, so the boundary can be
audited and the run costed after the fact.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.models import (
    CallFailed,
    Message,
    ModelCallFailed,
    ModelProfile,
    OpenAIModel,
    SpendCapReached,
    Tool,
    ToolCall,
    encode_jpeg,
)
from sim.interact import AssistantView, ParticipantError, Setup, UserView
from storage import CallOutcome, Profiles, Project, RunCall, stored_media_path
from storage.media import MediaError, read_image_rgb

#: profile fields an episode may override per participant (the rest is the endpoint's business)
PROFILE_OPTIONS = ("temperature", "reasoning_effort", "max_output_tokens", "spend_cap_usd",
                   "timeout_s", "max_retries")  # fmt: skip
REPAIRS = 1  # re-asks after an invalid reply before the participant stays silent (brief: one)
REPLY_KEEP = 2000  # characters of an invalid reply kept in the audit


class ModelParticipantError(ParticipantError):
    """The model behind an LLM participant cannot be used (endpoint, key, spend cap).

    ``retryable``: a later run may succeed (timeouts, rate limits, server errors after the
    client's own retries); ``kind`` is the client's failure kind (``auth``, ``server`` …).
    """

    def __init__(self, message: str, *, retryable: bool = False, kind: str = "client") -> None:
        super().__init__(message)
        self.retryable = retryable
        self.kind = kind


# ---- options --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Options:
    """An LLM participant's options, checked (see :func:`read_options`)."""

    profile: ModelProfile
    numbers: dict[str, int] = field(default_factory=dict)


def _whole(role: str, key: str, value: Any, low: int, high: int) -> int:
    try:
        n = int(value)
        if n != float(value):
            raise ValueError
    except (TypeError, ValueError):
        raise ParticipantError(
            f"{role} option {key}: expected a whole number, not {value!r}"
        ) from None
    if not low <= n <= high:
        raise ParticipantError(f"{role} option {key}: expected {low}..{high}, not {n}")
    return n


def read_options(setup: Setup, role: str, numbers: Mapping[str, tuple[int, int, int]]) -> Options:
    """The ``profile`` option loaded from the project, with per-episode overrides applied.

    ``numbers`` maps the participant's own whole-number options to (default, low, high).

    Raises:
        ParticipantError: no ``profile`` option, no project, an unknown or bad option.
        ProfileNotFoundError: the project has no such profile (a user error too).
    """
    opts = dict(setup.options)
    name = opts.pop("profile", None)
    if not isinstance(name, str) or not name.strip():
        raise ParticipantError(f"{role} llm: option profile: name a model profile of the project")
    known = {"profile", "repairs", *numbers, *PROFILE_OPTIONS}
    unknown = sorted(set(opts) - known)
    if unknown:
        raise ParticipantError(
            f"{role} llm: unknown option {unknown[0]!r} (known: {', '.join(sorted(known))})"
        )
    if name in setup.profiles:  # sent with the episode (a batch job): no project to open
        profile = _validated(name, setup.profiles[name])
    elif setup.project_root is None:
        raise ParticipantError(f"{role} llm needs a project: its model profile is stored there")
    else:
        profile = _load(setup.project_root, name)
    got = {k: _whole(role, k, opts[k], lo, hi) if k in opts else d
           for k, (d, lo, hi) in numbers.items()}  # fmt: skip
    repairs = _whole(role, "repairs", opts.get("repairs", REPAIRS), 0, 5)
    update = {k: opts[k] for k in PROFILE_OPTIONS if k in opts}
    try:
        profile = ModelProfile.model_validate(
            {**profile.model_dump(), **update, "schema_retries": repairs}
        )
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(profile)"
        raise ParticipantError(f"{role} option {where}: {err['msg']}") from None
    return Options(profile, got)


def _load(root: Path, name: str) -> ModelProfile:
    with Project.open(root) as project:
        return _validated(name, Profiles(project.db).get(name))


def _validated(name: str, config: Mapping[str, Any]) -> ModelProfile:
    try:
        return ModelProfile.from_config(name, config)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ParticipantError(f"model profile {name!r}: {where}: {err['msg']}") from None


# ---- one audited call -----------------------------------------------------------------------
def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def reasked(calls: Sequence[RunCall]) -> bool:
    """Whether one logical call's reply was re-asked: a later request carries more messages
    than the one before it (the client re-asks with the invalid reply and what was wrong with
    it; a request sent again as it was, e.g. with another output-cap field, is no re-ask)."""
    sizes = [len(c.request.get("messages") or ()) for c in calls]
    return any(b > a for a, b in itertools.pairwise(sizes))


def outcome_of(calls: Sequence[RunCall], replied: bool) -> CallOutcome:
    """A finished call's outcome: ``silenced`` when no valid reply came, else ``valid`` or
    ``repaired`` (valid only after a re-ask)."""
    if not replied:
        return "silenced"
    return "repaired" if reasked(calls) else "valid"


@dataclass
class Answer:
    """One logical call: its tool call (None: still invalid after the repair), the wall-clock
    latency of the whole call (retries and re-asks included) and the audit of every request."""

    call: ToolCall | None
    latency_s: float
    requests: list[dict[str, Any]]
    error: str | None = None


class AuditedModel:
    """An :class:`OpenAIModel` whose requests are kept in audit form (module docstring)."""

    def __init__(self, profile: ModelProfile, *, role: str, api_key: str | None = None) -> None:
        self.profile = profile
        self.role = role
        self._seen: list[RunCall] = []
        try:
            self.model = OpenAIModel(profile, recorder=self._seen.append, api_key=api_key)
        except CallFailed as err:
            raise self._error(err) from None
        #: frames are left out of the messages (a text-only model: its probe, or its refusal)
        self._text_only = not self.model.capabilities.images

    def ask(
        self,
        *,
        stage: str,
        prompt_version: str,
        messages: Sequence[Message],
        tool: Tool,
        images: Mapping[str, str],
        view: AssistantView | UserView,
    ) -> Answer:
        """One call offering ``tool``; ``images`` maps each evidence id sent to its sha256.
        The audit and the account go into ``view`` however the call ends (module docstring)."""
        self._seen.clear()
        start = time.monotonic()
        call: ToolCall | None = None
        error: str | None = None
        outcome: CallOutcome = "failed"  # until the call returns
        try:
            try:
                call = self._call(stage, prompt_version, messages, tool)
            except ModelCallFailed as err:
                if err.kind != "schema":
                    raise self._error(err) from None
                error = str(err)  # the repair did not help: the participant stays silent
            except CallFailed as err:
                raise self._error(err) from None
            outcome = outcome_of(self._seen, call is not None)
        finally:
            seen = list(self._seen)
            self._seen.clear()
            requests = [self._audit(r, images) for r in seen]
            view.requests.extend(requests)
            account = view.account
            account.outcome = outcome
            account.tokens_in += sum(r.tokens_in for r in seen)
            account.tokens_out += sum(r.tokens_out for r in seen)
            account.cost_usd += sum(r.cost_usd for r in seen)
        latency = round(time.monotonic() - start, 3)
        return Answer(call, latency, requests, error)

    def _call(
        self, stage: str, prompt_version: str, messages: Sequence[Message], tool: Tool
    ) -> ToolCall:
        """The client's call; a model that takes no images (probed so, or refusing them now)
        gets the words of every message without their frames, from then on."""
        if self._text_only:
            messages = [dataclasses.replace(m, images=()) for m in messages]
        try:
            call, _usage = self.model.call(
                stage=stage, prompt_version=prompt_version, messages=messages, tools=[tool]
            )
        except ModelCallFailed as err:
            if err.kind != "unsupported_content" or self._text_only:
                raise
            self._text_only = True
            return self._call(stage, prompt_version, messages, tool)
        return call

    def close(self) -> None:
        self.model.close()

    def _error(self, err: CallFailed) -> ModelParticipantError:
        what = "spend cap reached" if isinstance(err, SpendCapReached) else str(err)
        return ModelParticipantError(
            f"{self.role} llm, model profile {self.profile.name!r}: {what}",
            retryable=bool(err.retryable),
            kind=getattr(err, "kind", "spend_cap" if isinstance(err, SpendCapReached) else ""),
        )

    @staticmethod
    def _audit(rec: RunCall, images: Mapping[str, str]) -> dict[str, Any]:
        request = dict(rec.request)
        tools = request.pop("tools", [])
        out: dict[str, Any] = {
            "stage": rec.stage,
            "prompt_version": rec.prompt_version,
            "params": {k: v for k, v in request.items() if k not in ("messages", "tool_choice")},
            "tools": [t.get("function", {}).get("name") for t in tools],
            "tools_sha256": _digest(tools),
            "messages": [_with_shas(m, images) for m in request.get("messages", [])],
            "ok": rec.ok,
            "latency_s": round(rec.latency_s, 3),
            "tokens_in": rec.tokens_in,
            "tokens_out": rec.tokens_out,
            "cost_usd": rec.cost_usd,
        }
        if not rec.ok:
            out["error"] = rec.error
            out["reply"] = rec.reply[:REPLY_KEEP]
        return out


def _with_shas(message: Mapping[str, Any], images: Mapping[str, str]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list):
        return dict(message)
    parts = []
    for p in content:
        if isinstance(p, Mapping) and p.get("type") == "image":
            eid = str(p.get("evidence_id"))
            parts.append({"type": "image", "evidence_id": eid, "sha256": images.get(eid)})
        else:
            parts.append(dict(p) if isinstance(p, Mapping) else p)
    return {**message, "content": parts}


ImageSource = Callable[[str], bytes | None]
"""A frame's image by its sha256, as JPEG bytes ready to send (None: not available)."""


def project_images(root: Path | None, *, max_side: int = 512) -> ImageSource:
    """Frame images from the project's media store (by sha256), resized and JPEG-encoded."""
    cache_: dict[str, bytes | None] = {}

    def get(sha: str) -> bytes | None:
        if sha in cache_:
            return cache_[sha]
        found: bytes | None = None
        if root is not None:
            found = _media_jpeg(root, sha, max_side)
        if len(cache_) > 64:  # the window is 8 frames; old ones are never asked for again
            cache_.clear()
        cache_[sha] = found
        return found

    return get


def _media_jpeg(root: Path, sha: str, max_side: int) -> bytes | None:
    with Project.open(root) as project:
        path = stored_media_path(project, sha)
    if path is None:
        return None
    try:
        rgb = read_image_rgb(path)
    except MediaError:
        return None
    return encode_jpeg(rgb, roi=None, max_side=max_side, quality=90)
