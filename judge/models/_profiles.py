"""Model profiles: which OpenAI-compatible endpoint to call, and how, without any secret.

A profile is stored in the project (``model_profiles``), so it must never hold an API key: fields
that look like one are refused, and :func:`resolve_api_key` reads the key at call time from the
environment variable the profile names, else from the OS keyring.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from annotation import remember_secret
from judge.models._api import CallFailed
from judge.models._capabilities import Capabilities

if TYPE_CHECKING:
    from storage import Profiles

log = logging.getLogger("judge.client")

DEFAULT_KEYRING_SERVICE = "rollout-workbench"
NO_KEY = "not-needed"  # sent when the endpoint needs no key; the openai client insists on one

# Names that look like a secret. Checked only against names that are not real fields, since
# ``max_output_tokens`` and ``tokens_per_image`` are legitimate.
_SECRETISH = re.compile(r"(api[-_]?key|^key$|[-_]key$|token|secret|passw|bearer|credential)", re.I)
_AUTH_HEADER = re.compile(r"(authorization|api[-_]?key|token|secret|cookie)", re.I)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ModelProfile(BaseModel):
    """One endpoint configuration, stored in the project without any secret.

    Attributes:
        name: the profile's name (its key in ``model_profiles``).
        base_url: the API root of an OpenAI-compatible server, e.g. ``http://127.0.0.1:8000/v1``.
        model: the model name the server expects.
        api_key_env: the environment variable holding the key; ``""`` means no key is needed.
        keyring_service: OS keyring service to look in (default ``rollout-workbench``; the
            keyring user is the profile name).
        timeout_s: per-request timeout (spec: 180 s).
        max_retries: transport-level retries (HTTP 408/409/429/5xx, dropped connections,
            timeouts), done by the openai client with backoff, honouring ``Retry-After``.
        schema_retries: re-asks after a reply that is not exactly one valid tool call.
        max_output_tokens: reply limit per call (spec: 4096).
        temperature: sent only when set (spec: provider default).
        reasoning_effort: sent only when set (spec: ``low``).
        price_in_per_mtok: US$ per million input tokens.
        price_out_per_mtok: US$ per million output tokens.
        tokens_per_image: assumed cost of one image in the worst-case estimate that enforces
            the spend cap; keep it generous (a 512 px frame is ~260 tokens on most providers).
        spend_cap_usd: default cap per model client, i.e. per video (spec: US$2).
        extra_headers: non-secret headers (e.g. OpenRouter's ``X-Title``).
        capabilities: what the endpoint was measured to honour (:func:`probe_capabilities`);
            None until probed, when the client assumes :data:`judge.models.ASSUMED`.
    """

    # hide_input_in_errors: a validation error must never echo a pasted key back to a log
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    name: str = Field(min_length=1, max_length=80)
    base_url: str
    model: str = Field(min_length=1)
    api_key_env: str = "OPENAI_API_KEY"
    keyring_service: str | None = None
    timeout_s: float = Field(180.0, gt=0)
    max_retries: int = Field(4, ge=0, le=20)
    schema_retries: int = Field(2, ge=0, le=10)
    max_output_tokens: int = Field(4096, ge=1)
    temperature: float | None = Field(None, ge=0, le=2)
    reasoning_effort: str | None = None
    price_in_per_mtok: float = Field(0.0, ge=0)
    price_out_per_mtok: float = Field(0.0, ge=0)
    tokens_per_image: int = Field(800, ge=1)
    spend_cap_usd: float = Field(2.0, ge=0)
    extra_headers: dict[str, str] = Field(default_factory=dict)
    capabilities: Capabilities | None = None

    @model_validator(mode="before")
    @classmethod
    def _refuse_secrets(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key in data:
                if key not in cls.model_fields and _SECRETISH.search(str(key)):
                    raise ValueError(
                        f"profile field {key!r} looks like a secret; API keys never go in a "
                        "profile (it is stored in the project file). Set the environment "
                        "variable named by 'api_key_env' or store the key in the OS keyring"
                    )
        return data

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, v: str) -> str:
        if not re.match(r"^https?://[^\s/]+", v):
            raise ValueError("base_url must start with http:// or https:// and name a host")
        if "@" in v.split("/")[2]:
            raise ValueError("base_url must not carry credentials (user:password@host)")
        return v.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _check_env(cls, v: str) -> str:
        # An empty name means "no key needed"; anything else must be a variable *name*, which
        # also catches a key pasted here by mistake (keys contain '-').
        if v and not _ENV_NAME.match(v):
            raise ValueError(
                "api_key_env must be the name of an environment variable (e.g. OPENAI_API_KEY), "
                "not the key itself; use '' for endpoints that need no key"
            )
        return v

    @field_validator("extra_headers")
    @classmethod
    def _check_headers(cls, v: dict[str, str]) -> dict[str, str]:
        for header in v:
            if _AUTH_HEADER.search(header):
                raise ValueError(
                    f"extra header {header!r} looks like a credential; keys come from the "
                    "environment or the OS keyring, never from a profile"
                )
        return v

    def to_config(self) -> dict[str, Any]:
        """The profile as a JSON object without its name (what ``Profiles.save`` stores)."""
        exclude = {"name"} if self.capabilities is not None else {"name", "capabilities"}
        return self.model_dump(mode="json", exclude=exclude)

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any]) -> ModelProfile:
        """Validate a stored config (the ``name`` argument wins over any name inside it)."""
        return cls.model_validate({**config, "name": name})


def save_profile(store: Profiles, profile: ModelProfile) -> None:
    """Store a validated profile in the project."""
    store.save(profile.name, profile.to_config())


def load_profile(store: Profiles, name: str) -> ModelProfile:
    """Read and validate a profile from the project."""
    return ModelProfile.from_config(name, store.get(name))


def keyring_service(profile: ModelProfile) -> str:
    """The OS keyring service that holds this profile's key (the user is the profile name)."""
    return profile.keyring_service or DEFAULT_KEYRING_SERVICE


def _keyring_get(service: str, user: str) -> str | None:
    try:
        import keyring  # lazily: backend discovery is slow and often absent on servers

        return keyring.get_password(service, user)
    except Exception as err:  # no backend, locked store, D-Bus missing: all mean "no key here"
        log.debug("OS keyring unavailable (%s); skipping it", type(err).__name__)
        return None


def store_api_key(profile: ModelProfile, key: str) -> None:
    """Put ``key`` in the OS keyring under this profile (service, profile name).

    Raises:
        CallFailed: no usable keyring backend.
    """
    try:
        import keyring

        keyring.set_password(keyring_service(profile), profile.name, key)
    except Exception as err:
        raise CallFailed(
            f"could not store the key in the OS keyring ({type(err).__name__}); "
            f"set {profile.api_key_env or 'an environment variable'} instead"
        ) from None


def resolve_api_key(profile: ModelProfile) -> str:
    """The key for ``profile``: its environment variable, else the OS keyring.

    Returns ``"not-needed"`` when the profile says no key is needed (``api_key_env=""``).

    Raises:
        CallFailed: no key anywhere; the message says where to put one.
    """
    if not profile.api_key_env:
        return NO_KEY
    # remembered so that every error this process shows or logs leaves the key out
    # (annotation.redact), even where nothing around it says it is a key
    key = os.environ.get(profile.api_key_env, "").strip()
    if key:
        remember_secret(key)
        return key
    key = (_keyring_get(keyring_service(profile), profile.name) or "").strip()
    if key:
        remember_secret(key)
        return key
    raise CallFailed(
        f"no API key: set {profile.api_key_env} (profile {profile.name!r}) or store one in the "
        f"OS keyring (service {keyring_service(profile)!r}, user {profile.name!r})"
    )
