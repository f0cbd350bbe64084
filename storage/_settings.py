"""The one settings model: environment variables with the ``WB_`` prefix, else defaults.

| variable              | default      | meaning                                              |
|-----------------------|--------------|------------------------------------------------------|
| WB_RATER              | OS user name | rater id used by the GUI when none is chosen          |
| WB_FRAME_CACHE_MB     | 256          | bound on decoded frames held in memory per video      |
| WB_FRAME_STORE        | true         | build a seek cache so any frame shows in a few ms     |
| WB_FRAME_STORE_CRF    | 20           | seek cache quality: x264 CRF, lower = sharper, larger |
| WB_HOP_FRAMES         | 10           | frames jumped by "hop" in the player                  |
| WB_CONFIG_DIR         | platformdirs | where recent projects and shortcut overrides live     |
| WB_LOG_DIR            | platformdirs | where a bug's traceback is written (path is shown)    |
| WB_SYNCHRONOUS        | unset        | 1 runs GUI background work inline (read by the bridge)|

The seek cache is an H.264 proxy of each video (see ``storage.media.FrameStore``); CRF 0..51
as in x264, with a bit-rate ceiling of about 50 MB a minute of 480p whatever the CRF. Changing
it rebuilds caches on the next open. ``WB_FRAME_STORE_QUALITY`` (JPEG quality of the former
cache, never read) is refused, so nobody relies on it.

``WB_LEAD_PASSPHRASE`` is no setting of this machine: the CLI's results commands take it as the
lead's passphrase of a project in blind mode (``storage/_blinding.py``, a per-project switch
kept in the project, not here). The window never reads it: a rater's session must ask.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import platformdirs
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from annotation import UserError
from storage.media import DEFAULT_STORE_CRF


def _default_rater() -> str:
    try:
        return getpass.getuser() or "rater"
    except Exception:  # no user database in some containers
        return "rater"


class Settings(BaseSettings):
    """Workbench settings; see the table in this module's docstring (and the README)."""

    model_config = SettingsConfigDict(env_prefix="WB_", frozen=True)

    rater: str = Field(default_factory=_default_rater)
    frame_cache_mb: int = Field(256, ge=16, le=65536)
    frame_store: bool = True
    frame_store_crf: int = Field(DEFAULT_STORE_CRF, ge=0, le=51)
    hop_frames: int = Field(10, ge=2, le=1000)
    config_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_config_dir("rollout-workbench"))
    )
    log_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_log_dir("rollout-workbench"))
    )


# Variables that once existed, and what replaced them.
_REPLACED = {"WB_FRAME_STORE_QUALITY": "WB_FRAME_STORE_CRF (x264 CRF 0..51, default 20)"}


class SettingsError(UserError, ValueError):
    """A ``WB_`` environment variable with a value the workbench cannot use."""


def load_settings() -> Settings:
    """The settings in force; a bad ``WB_`` variable is refused by name."""
    for old, new in _REPLACED.items():
        if old in os.environ:
            raise SettingsError(f"bad setting: {old} is no longer read; set {new} instead")
    try:
        return Settings()
    except ValidationError as e:
        problems = "; ".join(
            f"WB_{'_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}" for err in e.errors()
        )
        raise SettingsError(f"bad setting: {problems}") from None
